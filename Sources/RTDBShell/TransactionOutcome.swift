import RTDBData

/// What a transaction expression decided: the new value (`.empty` deletes), or to abort the
/// transaction with the reason given to `abort(…)`.
public enum TransactionOutcome: Equatable, Sendable {
    case value(Node)
    case abort(String)
}
