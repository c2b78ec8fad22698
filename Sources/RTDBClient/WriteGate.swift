import Foundation

/// Flow control for writes: at most `limit` unanswered, later writers wait for a place in the
/// order they came. Entering is a plain lock when there is room, so a pipelined script does
/// not pay a hop onto the core's queue for every write.
///
/// `@unchecked Sendable`: its state is guarded by `lock`, which the compiler cannot see.
final class WriteGate: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = 0
    private var limit: Int
    /// Writers waiting for a place, first come first served.
    private var waiting: [OneShot<Void>] = []
    /// Waiting for every write to be answered.
    private var drained: [OneShot<Void>] = []
    /// Writes answered so far: whether the server is making progress.
    private var answeredCount = 0
    /// False while no connection is up (at first too: a connection attempt may hang for a
    /// long time): nothing can be answered then, so a writer would wait for ever; writes
    /// queue without a bound until one is (a script run offline).
    private var bounded = false

    init(limit: Int) {
        self.limit = limit
    }

    var count: Int { lock.withLock { pending } }
    var answered: Int { lock.withLock { answeredCount } }
    var capacity: Int { lock.withLock { limit } }

    /// Takes a place, waiting while there is none; throws `CancellationError` when the
    /// waiting task is cancelled first (then it holds no place).
    nonisolated(nonsending) func enter() async throws {
        let place: OneShot<Void>? = lock.withLock {
            if (pending < limit || !bounded) && waiting.isEmpty {
                pending += 1
                return nil
            }
            let place = OneShot<Void>()
            waiting.append(place)
            return place
        }
        guard let place else { return }
        do {
            try await place.value()
        } catch {
            let granted = lock.withLock { () -> Bool in
                guard let index = waiting.firstIndex(where: { $0 === place }) else { return true }
                waiting.remove(at: index)
                return false
            }
            if granted { leave() }  // the place came with the cancellation: give it on
            throw error
        }
    }

    /// Takes a place without waiting, whatever the limit: for work that must not wait
    /// (a transaction), counted so that `allAnswered` waits for it too.
    func admit() {
        lock.withLock { pending += 1 }
    }

    /// Gives a place back (a write was answered): to the first waiter, or free.
    func leave() {
        let (next, done): (OneShot<Void>?, [OneShot<Void>]) = lock.withLock {
            answeredCount += 1
            if !waiting.isEmpty && pending <= limit { return (waiting.removeFirst(), []) }
            pending -= 1
            guard pending == 0 else { return (nil, []) }
            defer { drained = [] }
            return (nil, drained)
        }
        next?.succeed()
        for waiter in done { waiter.succeed() }
    }

    func setLimit(_ newLimit: Int) {
        let admitted: [OneShot<Void>] = lock.withLock {
            limit = max(1, newLimit)
            var admitted: [OneShot<Void>] = []
            while pending < limit && !waiting.isEmpty {
                pending += 1
                admitted.append(waiting.removeFirst())
            }
            return admitted
        }
        for place in admitted { place.succeed() }
    }

    /// Lifts the limit while no connection is up (every waiter gets its place) and puts it
    /// back once one is.
    func setBounded(_ isBounded: Bool) {
        let admitted: [OneShot<Void>] = lock.withLock {
            bounded = isBounded
            guard !isBounded else { return [] }
            defer { waiting = [] }
            pending += waiting.count
            return waiting
        }
        for place in admitted { place.succeed() }
    }

    /// Returns when no write is unanswered.
    func allAnswered() async throws {
        let waiter: OneShot<Void>? = lock.withLock {
            guard pending > 0 else { return nil }
            let waiter = OneShot<Void>()
            drained.append(waiter)
            return waiter
        }
        try await waiter?.value()
    }
}
