import Synchronization

/// Cancels work already scheduled on a queue (a credential's expiry timer): the work checks
/// the flag when it runs. Unlike a `DispatchWorkItem`, it can be kept in `Sendable` state.
final class CancellationFlag: Sendable {
    private let flag = Atomic(false)

    var isCancelled: Bool { flag.load(ordering: .acquiring) }

    func cancel() { flag.store(true, ordering: .releasing) }
}
