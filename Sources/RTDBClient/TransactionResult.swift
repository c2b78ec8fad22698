import RTDBData

/// How a transaction ended when it did not fail: committed, or given up by its update function.
/// Failures (overridden by a `set`, too many retries, refused by the server, connection lost
/// while the outcome was unknown) are thrown as `DatabaseError`s instead.
public struct TransactionResult: Sendable, Equatable {
    public let committed: Bool
    /// Committed: the value written (server values as estimated locally). Aborted: the value
    /// the last attempt saw.
    public let snapshot: Node
    /// Why the update function gave up, when it said.
    public let abortReason: String?
    /// How many times the value went to the server (compare-and-set attempts).
    public let attempts: Int
}
