import RTDBProtocol

/// A request the server (or the client core) refused, as the official clients report it:
/// the upper-cased status code and the server's explanation.
public struct DatabaseError: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: String
    public let message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public init(status: ResponseStatus, message: String) {
        self.init(code: status.rawValue.uppercased(), message: message)
    }

    /// A read made while offline that the client could not answer itself.
    public static let offline = DatabaseError(status: .disconnected, message: "Client is offline.")

    // A transaction's failures, with the official clients' abort reasons as codes.

    /// A `set` or `update` overlapping the transaction's location was made while it ran.
    public static let transactionOverridden = DatabaseError(code: "SET", message: "a later set or update at an overlapping path aborted the transaction")
    /// The data kept changing: every attempt was stale.
    public static let transactionMaxRetry = DatabaseError(code: "MAXRETRY", message: "the data kept changing: \(TransactionQueue.maxRetries) attempts were all stale")
    /// The connection was lost after the value was sent: it may or may not have been written.
    public static let transactionDisconnected = DatabaseError(code: "DISCONNECT", message: "the connection was lost before the server answered; the transaction may or may not have been applied")

    public var description: String { message.isEmpty ? code : "\(code): \(message)" }
}
