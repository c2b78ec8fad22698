import Dispatch
import RTDBProtocol
import Synchronization

/// Where a database tells its monitors (`monitor`, the profiler's stream) what it runs. With
/// none watching, an operation costs one atomic load; with some, it is made and handed to
/// each monitor's queue, never waited for: a monitor that falls behind by `capacity`
/// operations loses the next ones, and is told how many.
public final class OperationFeed: Sendable {
    private let watchers = Atomic<Int>(0)
    /// Read on every operation while watched: an array the lock hands out without copying.
    private let subscribers = Mutex<[(id: Int, subscriber: Subscriber)]>([])
    private let nextID = Atomic<Int>(0)
    /// How long a monitor's queue gathers operations before it hands them on: one wake-up
    /// per batch rather than per operation, a delay no reader of its lines sees.
    static let gathering: DispatchTimeInterval = .milliseconds(10)

    public init() {}

    /// Whether any monitor watches: operations are only made when one does.
    public var isWatched: Bool { watchers.load(ordering: .relaxed) > 0 }

    /// Hands `record` to every monitor.
    public func publish(_ record: OperationRecord) {
        let current = subscribers.withLock { $0 }
        for entry in current { entry.subscriber.offer(record) }
    }

    /// Calls `handle` (on a queue of its own, in order) with the operations published from now
    /// on, in batches, and how many were lost before each batch since the last; until the
    /// subscription is cancelled.
    public func subscribe(capacity: Int = 50_000, _ handle: @escaping @Sendable ([OperationRecord], _ dropped: Int) -> Void) -> Subscription {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let subscriber = Subscriber(capacity: capacity, handle: handle)
        subscribers.withLock { $0.append((id, subscriber)) }
        watchers.add(1, ordering: .relaxed)
        return Subscription { [weak self] in
            guard let self else { return }
            let removed = self.subscribers.withLock { subscribers -> Bool in
                let before = subscribers.count
                subscribers.removeAll { $0.id == id }
                return subscribers.count < before
            }
            if removed { self.watchers.subtract(1, ordering: .relaxed) }
        }
    }

    /// Ends a monitor's feed when cancelled (or released).
    public final class Subscription: Sendable {
        private let end: Mutex<(@Sendable () -> Void)?>

        init(end: @escaping @Sendable () -> Void) { self.end = Mutex(end) }

        public func cancel() {
            let run = end.withLock { end in
                defer { end = nil }
                return end
            }
            run?()
        }

        deinit { cancel() }
    }

    /// One monitor: its operations waiting to be handled, at most `capacity`.
    private final class Subscriber: Sendable {
        private struct Waiting {
            var records: [OperationRecord] = []
            var dropped = 0
            var scheduled = false
        }
        private let waiting = Mutex(Waiting())
        private let capacity: Int
        private let handle: @Sendable ([OperationRecord], Int) -> Void
        private let queue = DispatchQueue(label: "rtdb.monitor")
        /// The most records a batch's array is kept for the next batch (a few hundred kB).
        static let keptRoom = 4096

        init(capacity: Int, handle: @escaping @Sendable ([OperationRecord], Int) -> Void) {
            self.capacity = capacity
            self.handle = handle
        }

        func offer(_ record: OperationRecord) {
            let schedule = waiting.withLock { waiting -> Bool in
                if waiting.records.count >= capacity {
                    waiting.dropped += 1
                } else {
                    waiting.records.append(record)
                }
                guard !waiting.scheduled else { return false }
                waiting.scheduled = true
                return true
            }
            if schedule { queue.asyncAfter(deadline: .now() + OperationFeed.gathering) { self.drain() } }
        }

        private func drain() {
            var (records, dropped) = waiting.withLock { waiting in
                defer { waiting = Waiting() }
                return (waiting.records, waiting.dropped)
            }
            handle(records, dropped)
            // The batch's room is the next one's, if nothing came meanwhile: the database
            // appends to an array that need not grow (copying itself) as it fills. Not the
            // room of a burst, which would stay taken while the monitor runs.
            guard records.capacity <= Subscriber.keptRoom else { return }
            records.removeAll(keepingCapacity: true)
            waiting.withLock { waiting in
                if waiting.records.isEmpty && waiting.records.capacity < records.capacity { swap(&waiting.records, &records) }
            }
        }
    }
}
