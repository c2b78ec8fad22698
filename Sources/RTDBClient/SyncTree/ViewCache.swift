import RTDBData

// Follows the Firebase JS SDK's ViewCache and CacheNode (core/view/ViewCache.ts, CacheNode.ts).

/// A cached node and how much of it is known: complete (fully initialized) or partial, and
/// whether a query filter left children out.
struct CacheNode {
    var node: Node
    var complete: Bool
    var filtered: Bool

    func isCompleteForPath(_ path: Path) -> Bool {
        guard let front = path.first else { return complete && !filtered }
        return isCompleteForChild(front)
    }

    func isCompleteForChild(_ key: String) -> Bool {
        (complete && !filtered) || node.hasChild(key)
    }
}

/// A view's two caches: what the server sent (`server`) and what listeners see (`event`,
/// the server data with the user's pending writes on top and the query's filter applied).
struct ViewCache {
    var event: CacheNode
    var server: CacheNode

    func updatingEvent(_ node: Node, complete: Bool, filtered: Bool) -> ViewCache {
        ViewCache(event: CacheNode(node: node, complete: complete, filtered: filtered), server: server)
    }

    func updatingServer(_ node: Node, complete: Bool, filtered: Bool) -> ViewCache {
        ViewCache(event: event, server: CacheNode(node: node, complete: complete, filtered: filtered))
    }

    var completeEventNode: Node? { event.complete ? event.node : nil }
    var completeServerNode: Node? { server.complete ? server.node : nil }
}
