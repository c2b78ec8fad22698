import RTDBData

/// What a transaction's update function decides for one attempt.
public enum TransactionUpdate: Sendable, Equatable {
    /// Write this value (it may hold server values such as the timestamp).
    case commit(Node)
    /// Give up. The reason is reported back; nil is the official clients' "returned nothing".
    case abort(String?)
}
