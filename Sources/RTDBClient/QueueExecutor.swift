import Dispatch

/// A serial executor over a dispatch queue: the `Repo` actor runs on it, and so do the
/// transport callbacks and timers that hop onto the queue, in the order they were queued
/// (a `Task` per callback would not keep that order).
final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets `assumeIsolated` accept code running in a block this queue runs.
    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
