/// A write the core has applied locally and queued for the server: awaiting it waits for
/// the server's answer, and a task that stops waiting (cancelled) leaves the write queued.
public struct PendingWrite: Sendable {
    /// The new child's key, for a push.
    public let key: String?
    let outcome: OneShot<Void>

    init(key: String? = nil, outcome: OneShot<Void>) {
        self.key = key
        self.outcome = outcome
    }

    /// Returns when the server accepted the write; throws the `DatabaseError` it was
    /// rejected with, or `CancellationError` when the waiting task is cancelled first.
    public func acknowledged() async throws {
        try await outcome.value()
    }

    /// Calls `handler` with the server's answer when it comes (at once if it has).
    public func whenAnswered(_ handler: @escaping @Sendable (Result<Void, DatabaseError>) -> Void) {
        outcome.whenResolved { result in
            handler(result.mapError { $0 as? DatabaseError ?? DatabaseError(code: "UNKNOWN", message: "\($0)") })
        }
    }
}
