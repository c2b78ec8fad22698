import RTDBData

// Follows the Firebase JS SDK's View and EventGenerator (core/view/View.ts, EventGenerator.ts).

/// One query at one location: its caches, its processor and its registrations.
final class View {
    let query: QuerySpec
    private let processor: ViewProcessor
    private(set) var cache: ViewCache
    private(set) var registrations: [EventRegistration] = []

    init(query: QuerySpec, initial: ViewCache) {
        self.query = query
        let indexed = IndexedFilter(index: query.params.index)
        let filter = makeFilter(for: query.params)
        processor = ViewProcessor(filter: filter)
        let server = indexed.updateFullNode(.empty, initial.server.node, nil)
        let event = filter.updateFullNode(.empty, initial.event.node, nil)
        cache = ViewCache(event: CacheNode(node: event, complete: initial.event.complete, filtered: filter.filtersNodes),
                          server: CacheNode(node: server, complete: initial.server.complete, filtered: indexed.filtersNodes))
    }

    var isEmpty: Bool { registrations.isEmpty }
    var serverCache: Node { cache.server.node }
    var completeNode: Node? { cache.completeEventNode }

    /// The server's complete data at `path` below this view, when the view has it.
    func completeServerCache(at path: Path) -> Node? {
        guard let server = cache.completeServerNode else { return nil }
        if query.params.loadsAllData || (!path.isRoot && !server.child(path.first!).isEmpty) {
            return server.child(at: path)
        }
        return nil
    }

    func add(_ registration: EventRegistration) { registrations.append(registration) }

    /// Removes one registration (or all when nil); with an error, their cancel events first.
    func remove(_ registration: EventRegistration?, error: DatabaseError?) -> [(EventRegistration, DatabaseError)] {
        let cancelled = error.map { e in registrations.map { ($0, e) } } ?? []
        if let registration {
            if let i = registrations.firstIndex(where: { $0 === registration }) { registrations.remove(at: i) }
        } else {
            registrations = []
        }
        return cancelled
    }

    func apply(_ operation: Operation, writes: WriteTreeRef, completeServerCache: Node?) -> [Event] {
        let (newCache, changes) = processor.apply(operation, to: cache, writes: writes, completeCache: completeServerCache)
        cache = newCache
        return EventGenerator(query: query).events(for: changes, eventCache: newCache.event.node, registrations: registrations)
    }

    /// What a new registration hears first: every child, then the value if complete.
    func initialEvents(for registration: EventRegistration) -> [Event] {
        let event = cache.event
        var changes: [Change] = []
        if !event.node.isLeaf {
            for (key, child) in IndexedChildren.sorted(event.node, index: .priority) { changes.append(.added(key, child)) }
        }
        if event.complete { changes.append(.value(event.node)) }
        return EventGenerator(query: query).events(for: changes, eventCache: event.node, registrations: [registration])
    }
}

/// Turns a view's changes into events, in the order listeners expect: removed, added,
/// moved, changed, value; within a type, in query order, each with its previous sibling.
struct EventGenerator {
    let query: QuerySpec

    func events(for changes: [Change], eventCache: Node, registrations: [EventRegistration]) -> [Event] {
        let index = query.params.index
        var moves: [Change] = []
        for change in changes where change.type == .childChanged && index.orderingValueChanged(change.oldNode!, change.node) {
            moves.append(.moved(change.key!, change.node))
        }
        var events: [Event] = []
        for type in [EventType.childRemoved, .childAdded, .childMoved, .childChanged, .value] {
            var ofType = (type == .childMoved ? moves : changes).filter { $0.type == type }
            if type != .value {
                ofType.sort { index.compare(($0.key!, $0.node), ($1.key!, $1.node)) < 0 }
            }
            for change in ofType {
                var previous: String?
                if type != .value && type != .childRemoved {
                    previous = IndexedChildren.predecessor(of: change.key!, change.node, in: eventCache, index: index)?.name
                }
                for registration in registrations where registration.responds(to: type) {
                    events.append(Event(type: type, path: query.path, key: change.key?.name, previousKey: previous,
                                        node: change.node, registration: registration))
                }
            }
        }
        return events
    }
}
