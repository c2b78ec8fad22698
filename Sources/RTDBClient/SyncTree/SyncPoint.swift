import RTDBData

// Follows the Firebase JS SDK's SyncPoint (core/SyncPoint.ts).

/// The views at one location, one per distinct query, in the order they were added.
final class SyncPoint {
    private(set) var views: [(id: String, view: View)] = []

    var isEmpty: Bool { views.isEmpty }

    func view(_ id: String) -> View? { views.first { $0.id == id }?.view }

    func apply(_ operation: Operation, writes: WriteTreeRef, completeServerCache: Node?) -> [Event] {
        if let id = operation.source.queryID {
            guard let view = view(id) else { return [] }
            return view.apply(operation, writes: writes, completeServerCache: completeServerCache)
        }
        return views.flatMap { $0.view.apply(operation, writes: writes, completeServerCache: completeServerCache) }
    }

    /// The view for `query`, or a new one built from what is known (not yet added).
    func viewOrNew(_ query: QuerySpec, writes: WriteTreeRef, serverCache: Node, serverComplete: Bool) -> View {
        if let existing = view(query.identifier) { return existing }
        var eventCache = writes.completeEventCache(serverComplete ? serverCache : nil)
        var eventComplete = false
        if eventCache != nil {
            eventComplete = true
        } else if !serverCache.isLeaf {
            eventCache = writes.completeEventChildren(serverCache)
        } else {
            eventCache = .empty
        }
        return View(query: query, initial: ViewCache(
            event: CacheNode(node: eventCache!, complete: eventComplete, filtered: false),
            server: CacheNode(node: serverCache, complete: serverComplete, filtered: false)))
    }

    func add(_ registration: EventRegistration, for query: QuerySpec, writes: WriteTreeRef, serverCache: Node, serverComplete: Bool) -> [Event] {
        let view = viewOrNew(query, writes: writes, serverCache: serverCache, serverComplete: serverComplete)
        if self.view(query.identifier) == nil { views.append((query.identifier, view)) }
        view.add(registration)
        return view.initialEvents(for: registration)
    }

    /// Removes a registration (nil: all) from `query`'s view, or from every view for the
    /// default query. Returns the queries that no longer have a view, and cancel notices.
    func remove(_ registration: EventRegistration?, for query: QuerySpec, error: DatabaseError?)
        -> (removed: [QuerySpec], cancelled: [(EventRegistration, DatabaseError)]) {
        var removed: [QuerySpec] = []
        var cancelled: [(EventRegistration, DatabaseError)] = []
        let hadCompleteView = hasCompleteView
        let ids = query.identifier == "default" ? views.map(\.id) : [query.identifier]
        for id in ids {
            guard let view = view(id) else { continue }
            cancelled += view.remove(registration, error: error)
            if view.isEmpty {
                views.removeAll { $0.id == id }
                if !view.query.params.loadsAllData { removed.append(view.query) }
            }
        }
        if hadCompleteView && !hasCompleteView { removed.append(QuerySpec(path: query.path)) }
        return (removed, cancelled)
    }

    var queryViews: [View] { views.map(\.view).filter { !$0.query.params.loadsAllData } }

    func completeServerCache(at path: Path) -> Node? {
        for (_, view) in views { if let node = view.completeServerCache(at: path) { return node } }
        return nil
    }

    func viewFor(_ query: QuerySpec) -> View? {
        query.params.loadsAllData ? completeView : view(query.identifier)
    }

    var completeView: View? { views.first { $0.view.query.params.loadsAllData }?.view }
    var hasCompleteView: Bool { completeView != nil }
}
