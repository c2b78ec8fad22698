import Foundation
import Synchronization

/// Flow control for writes: at most `limit` unanswered, and at most `entryLimit` places
/// written by them (an import's updates of 10,000 children each: a hundred in flight held a
/// million entries in the pending layer at once); later writers wait for a place in the order
/// they came. A write alone always goes, however large. Entering is a plain lock when there is
/// room, so a pipelined script does not pay a hop onto the core's queue for every write.
///
final class WriteGate: Sendable {
    private struct State {
        var pending = 0
        var limit: Int
        /// The places the pending writes write (`Write.entryCount`).
        var entries = 0
        let entryLimit: Int
        /// Writers waiting for a place, first come first served.
        var waiting: [(place: OneShot<Void>, entries: Int)] = []
        /// Waiting for every write to be answered.
        var drained: [OneShot<Void>] = []
        /// Writes answered so far: whether the server is making progress.
        var answered = 0
        /// False while no connection is up (at first too: a connection attempt may hang for a
        /// long time): nothing can be answered then, so a writer would wait for ever; writes
        /// queue without a bound until one is (a script run offline).
        var bounded = false
        /// How long a writer waits for a place while no write is answered (nil: as long as it
        /// takes): a server that stopped answering (a stopped process) is reported, not waited
        /// on for ever.
        var patience: TimeInterval?

        /// Whether a write of `size` entries may go now.
        func fits(_ size: Int) -> Bool {
            !bounded || (pending < limit && (pending == 0 || entries + size <= entryLimit))
        }

        /// Places for the waiters, in order, while the first fits.
        mutating func admitWaiting() -> [OneShot<Void>] {
            var admitted: [OneShot<Void>] = []
            while let first = waiting.first, fits(first.entries) {
                waiting.removeFirst()
                pending += 1
                entries += first.entries
                admitted.append(first.place)
            }
            return admitted
        }
    }

    private let state: Mutex<State>
    let entryLimit: Int

    init(limit: Int, entryLimit: Int = 100_000) {
        self.entryLimit = entryLimit
        state = Mutex(State(limit: limit, entryLimit: entryLimit))
    }

    var count: Int { state.withLock { $0.pending } }
    var answered: Int { state.withLock { $0.answered } }
    var capacity: Int { state.withLock { $0.limit } }
    /// Writers waiting for a place.
    var waiters: Int { state.withLock { $0.waiting.count } }

    /// Takes a place for a write of `size` entries, waiting while there is none; throws
    /// `CancellationError` when the waiting task is cancelled first (then it holds no place).
    nonisolated(nonsending) func enter(entries size: Int = 1) async throws {
        let place: OneShot<Void>? = state.withLock { state in
            if state.waiting.isEmpty && state.fits(size) {
                state.pending += 1
                state.entries += size
                return nil
            }
            let place = OneShot<Void>()
            state.waiting.append((place, size))
            return place
        }
        guard let place else { return }
        do {
            guard let patience = state.withLock({ $0.patience }) else { return try await place.value() }
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
            let granted = state.withLock { state -> Bool in
                guard let index = state.waiting.firstIndex(where: { $0.place === place }) else { return true }
                state.waiting.remove(at: index)
                return false
            }
            if granted { leave(entries: size) }  // the place came with the cancellation: give it on
            throw error
        }
    }

    /// Takes a place without waiting, whatever the limit: for work that must not wait
    /// (a transaction), counted so that `allAnswered` waits for it too.
    func admit(entries size: Int = 1) {
        state.withLock { state in
            state.pending += 1
            state.entries += size
        }
    }

    /// Gives a place back (a write was answered): to the waiters that now fit, or free.
    func leave(entries size: Int = 1) {
        let (admitted, done): ([OneShot<Void>], [OneShot<Void>]) = state.withLock { state in
            state.answered += 1
            state.pending -= 1
            state.entries -= size
            let admitted = state.admitWaiting()
            guard state.pending == 0 else { return (admitted, []) }
            defer { state.drained = [] }
            return (admitted, state.drained)
        }
        for place in admitted { place.succeed() }
        for waiter in done { waiter.succeed() }
    }

    func setPatience(_ seconds: TimeInterval?) {
        state.withLock { $0.patience = seconds }
    }

    func setLimit(_ newLimit: Int) {
        let admitted: [OneShot<Void>] = state.withLock { state in
            state.limit = max(1, newLimit)
            return state.admitWaiting()
        }
        for place in admitted { place.succeed() }
    }

    /// Lifts the limit while no connection is up (every waiter gets its place) and puts it
    /// back once one is.
    func setBounded(_ isBounded: Bool) {
        let admitted: [OneShot<Void>] = state.withLock { state in
            state.bounded = isBounded
            return state.admitWaiting()
        }
        for place in admitted { place.succeed() }
    }

    /// Returns when no write is unanswered.
    func allAnswered() async throws {
        let waiter: OneShot<Void>? = state.withLock { state in
            guard state.pending > 0 else { return nil }
            let waiter = OneShot<Void>()
            state.drained.append(waiter)
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
