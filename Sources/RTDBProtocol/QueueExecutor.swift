import Dispatch

/// A serial executor over a dispatch queue: an actor that runs on it (the client's `Repo`,
/// the engine's `Database`) shares the queue with the transport callbacks, store callbacks
/// and timers that hop onto it, in the order they were queued (a `Task` per callback would
/// not keep that order). Code in a block the queue runs takes the actor's isolation with
/// `assumeIsolated`.
public final class QueueExecutor: SerialExecutor {
    public let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets `assumeIsolated` accept code running in a block this queue runs.
    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
