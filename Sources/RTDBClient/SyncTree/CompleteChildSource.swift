import RTDBData

// Follows the Firebase JS SDK's CompleteChildSource (core/view/CompleteChildSource.ts).

/// Where a filter finds children it does not hold itself (to refill a limit window).
protocol CompleteChildSource {
    func completeChild(_ key: ChildKey) -> Node?
    func child(after child: (key: ChildKey, node: Node), index: Index, reverse: Bool) -> (key: ChildKey, node: Node)?
}

struct NoCompleteChildSource: CompleteChildSource {
    func completeChild(_ key: ChildKey) -> Node? { nil }
    func child(after child: (key: ChildKey, node: Node), index: Index, reverse: Bool) -> (key: ChildKey, node: Node)? { nil }
}

/// Children from the view's caches with the user's pending writes on top.
struct WriteTreeCompleteChildSource: CompleteChildSource {
    let writes: WriteTreeRef
    let viewCache: ViewCache
    let completeServerCache: Node?

    func completeChild(_ key: ChildKey) -> Node? {
        let event = viewCache.event
        if event.isCompleteForChild(key.name) { return event.node.child(key) }
        let server = completeServerCache.map { CacheNode(node: $0, complete: true, filtered: false) } ?? viewCache.server
        return writes.completeChild(key, server: server)
    }

    func child(after child: (key: ChildKey, node: Node), index: Index, reverse: Bool) -> (key: ChildKey, node: Node)? {
        let serverData = completeServerCache ?? viewCache.completeServerNode
        return writes.indexedSlice(serverData, start: child, count: 1, reverse: reverse, index: index).first
    }
}
