import Foundation

/// Flow control for writes: at most `limit` unanswered, and at most `entryLimit` places
/// written by them (an import's updates of 10,000 children each: a hundred in flight held a
/// million entries in the pending layer at once); later writers wait for a place in the order
/// they came. A write alone always goes, however large. Entering is a plain lock when there is
/// room, so a pipelined script does not pay a hop onto the core's queue for every write.
///
/// `@unchecked Sendable`: its state is guarded by `lock`, which the compiler cannot see.
final class WriteGate: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = 0
    private var limit: Int
    /// The places the pending writes write (`Write.entryCount`).
    private var entries = 0
    let entryLimit: Int
    /// Writers waiting for a place, first come first served.
    private var waiting: [(place: OneShot<Void>, entries: Int)] = []
    /// Waiting for every write to be answered.
    private var drained: [OneShot<Void>] = []
    /// Writes answered so far: whether the server is making progress.
    private var answeredCount = 0
    /// False while no connection is up (at first too: a connection attempt may hang for a
    /// long time): nothing can be answered then, so a writer would wait for ever; writes
    /// queue without a bound until one is (a script run offline).
    private var bounded = false
    /// How long a writer waits for a place while no write is answered (nil: as long as it
    /// takes): a server that stopped answering (a stopped process) is reported, not waited
    /// on for ever.
    private var patience: TimeInterval?

    init(limit: Int, entryLimit: Int = 100_000) {
        self.limit = limit
        self.entryLimit = entryLimit
    }

    var count: Int { lock.withLock { pending } }
    var answered: Int { lock.withLock { answeredCount } }
    var capacity: Int { lock.withLock { limit } }
    /// Writers waiting for a place.
    var waiters: Int { lock.withLock { waiting.count } }

    /// Under the lock: whether a write of `size` entries may go now.
    private func fits(_ size: Int) -> Bool {
        !bounded || (pending < limit && (pending == 0 || entries + size <= entryLimit))
    }

    /// Takes a place for a write of `size` entries, waiting while there is none; throws
    /// `CancellationError` when the waiting task is cancelled first (then it holds no place).
    nonisolated(nonsending) func enter(entries size: Int = 1) async throws {
        let place: OneShot<Void>? = lock.withLock {
            if waiting.isEmpty && fits(size) {
                pending += 1
                entries += size
                return nil
            }
            let place = OneShot<Void>()
            waiting.append((place, size))
            return place
        }
        guard let place else { return }
        do {
            guard let patience = lock.withLock({ self.patience }) else { return try await place.value() }
            var seen = answered
            while true {
                do {
                    return try await withTimeout(patience) { try await place.value() }
                } catch is TimeoutError {
                    // Waited out only while nothing is answered: a slow server that answers is waited for.
                    let now = answered
                    guard now == seen else {
                        seen = now
                        continue
                    }
                    throw WriteStall(seconds: patience, waiting: count)
                }
            }
        } catch {
            let granted = lock.withLock { () -> Bool in
                guard let index = waiting.firstIndex(where: { $0.place === place }) else { return true }
                waiting.remove(at: index)
                return false
            }
            if granted { leave(entries: size) }  // the place came with the cancellation: give it on
            throw error
        }
    }

    /// Takes a place without waiting, whatever the limit: for work that must not wait
    /// (a transaction), counted so that `allAnswered` waits for it too.
    func admit(entries size: Int = 1) {
        lock.withLock {
            pending += 1
            entries += size
        }
    }

    /// Gives a place back (a write was answered): to the waiters that now fit, or free.
    func leave(entries size: Int = 1) {
        let (admitted, done): ([OneShot<Void>], [OneShot<Void>]) = lock.withLock {
            answeredCount += 1
            pending -= 1
            entries -= size
            let admitted = admitWaiting()
            guard pending == 0 else { return (admitted, []) }
            defer { drained = [] }
            return (admitted, drained)
        }
        for place in admitted { place.succeed() }
        for waiter in done { waiter.succeed() }
    }

    /// Under the lock: places for the waiters, in order, while the first fits.
    private func admitWaiting() -> [OneShot<Void>] {
        var admitted: [OneShot<Void>] = []
        while let first = waiting.first, fits(first.entries) {
            waiting.removeFirst()
            pending += 1
            entries += first.entries
            admitted.append(first.place)
        }
        return admitted
    }

    func setPatience(_ seconds: TimeInterval?) {
        lock.withLock { patience = seconds }
    }

    func setLimit(_ newLimit: Int) {
        let admitted: [OneShot<Void>] = lock.withLock {
            limit = max(1, newLimit)
            return admitWaiting()
        }
        for place in admitted { place.succeed() }
    }

    /// Lifts the limit while no connection is up (every waiter gets its place) and puts it
    /// back once one is.
    func setBounded(_ isBounded: Bool) {
        let admitted: [OneShot<Void>] = lock.withLock {
            bounded = isBounded
            return admitWaiting()
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

/// A write waited for a place while the server answered none of the writes before it.
public struct WriteStall: Error, Sendable, CustomStringConvertible {
    public let seconds: TimeInterval
    public let waiting: Int
    public var description: String {
        "the server answered none of the \(waiting) writes sent to it in \(String(format: "%g", seconds)) s: it does not answer (stopped or overloaded)"
    }
}
