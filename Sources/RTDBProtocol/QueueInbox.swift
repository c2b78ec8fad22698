import Dispatch
import Synchronization

/// Hands items from any thread to one serial dispatch queue, many per hop: the first item
/// posted schedules a turn on the queue, and that turn takes everything posted by the time
/// it runs. A pipelined writer's messages cost one queue hop (and at most one thread
/// wake-up) per batch instead of one each.
///
/// Order holds: items are handled in the order posted, and an item never runs later than a
/// block queued after it was posted would (the turn that takes it was queued no later).
public final class QueueInbox<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        var scheduled = false
    }

    private let state = Mutex(State())
    private let queue: DispatchQueue
    private let handle: @Sendable (Item) -> Void

    /// `handle` runs on `queue` for each item, in the order posted.
    public init(queue: DispatchQueue, handle: @escaping @Sendable (Item) -> Void) {
        self.queue = queue
        self.handle = handle
    }

    public func post(_ item: Item) {
        let schedule = state.withLock { state -> Bool in
            state.items.append(item)
            guard !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        if schedule { queue.async { self.drain() } }
    }

    private func drain() {
        let batch = state.withLock { state -> [Item] in
            state.scheduled = false
            defer { state.items = [] }
            return state.items
        }
        for item in batch { handle(item) }
    }
}
