import RTDBClient
import RTDBData

/// A transaction a script started while offline by choice. It cannot be awaited before the
/// next line (the `online` that lets it be sent comes later), so `online` waits for it and
/// prints its outcome as the line that started it would have.
struct QueuedTransaction {
    let done: OneShot<TransactionResult>
    let log: TransactionLog
    let verbose: Bool
    let renderer: Renderer
    let json: Bool
    /// The line that started it, for its errors ("line 4").
    let source: String?
}
