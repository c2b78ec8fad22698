import RTDBData

// Follows the Firebase JS SDK's ViewProcessor (core/view/ViewProcessor.ts).

/// Applies an operation to a view's caches and lists the child changes it made.
struct ViewProcessor {
    let filter: NodeFilter

    func apply(_ operation: Operation, to old: ViewCache, writes: WriteTreeRef, completeCache: Node?) -> (ViewCache, [Change]) {
        let changes = ChildChangeAccumulator()
        let new: ViewCache
        switch operation {
        case let .overwrite(source, path, node):
            // Tagged data is the query's own (filtered); so is anything below filtered data,
            // except a full overwrite at the root.
            let filterServerNode = source.queryID != nil || (old.server.filtered && !path.isRoot)
            new = source.fromUser
                ? userOverwrite(old, path, node, writes, completeCache, changes)
                : serverOverwrite(old, path, node, writes, completeCache, filterServerNode: filterServerNode, changes)
        case let .merge(source, path, children):
            let filterServerNode = source.queryID != nil || old.server.filtered
            new = source.fromUser
                ? userMerge(old, path, children, writes, completeCache, changes)
                : serverMerge(old, path, children, writes, completeCache, filterServerNode: filterServerNode, changes)
        case let .ackUserWrite(path, affected, revert):
            new = revert
                ? revertUserWrite(old, path, writes, completeCache, changes)
                : ackUserWrite(old, path, affected, writes, completeCache, changes)
        case let .listenComplete(_, path):
            new = listenComplete(old, path, writes, changes)
        }
        var list = changes.all
        addValueChange(old, new, &list)
        return (new, list)
    }

    /// A value event when the view is complete and something visible changed.
    private func addValueChange(_ old: ViewCache, _ new: ViewCache, _ changes: inout [Change]) {
        let event = new.event
        guard event.complete else { return }
        let leafOrEmpty = event.node.isLeaf || event.node.isEmpty
        let oldComplete = old.completeEventNode
        if !changes.isEmpty || !old.event.complete
            || (leafOrEmpty && event.node != oldComplete)
            || event.node.priority != oldComplete?.priority {
            changes.append(.value(new.completeEventNode!))
        }
    }

    private func eventCacheAfterServerEvent(_ cache: ViewCache, _ changePath: Path, _ writes: WriteTreeRef,
                                            _ source: CompleteChildSource, _ changes: ChildChangeAccumulator) -> ViewCache {
        let oldEvent = cache.event
        if writes.shadowingWrite(changePath) != nil { return cache }
        var newEvent: Node
        if changePath.isRoot {
            if cache.server.filtered {
                let server = cache.completeServerNode
                let children = (server.map { !$0.isLeaf } ?? false) ? server! : Node.empty
                newEvent = filter.updateFullNode(cache.event.node, writes.completeEventChildren(children), changes)
            } else {
                let complete = writes.completeEventCache(cache.completeServerNode)
                newEvent = filter.updateFullNode(cache.event.node, complete ?? .empty, changes)
            }
        } else {
            let key = changePath.first!
            if key == ".priority" {
                if let priority = writes.eventCacheAfterServerOverwrite(changePath, serverNode: cache.server.node) {
                    newEvent = filter.updatePriority(oldEvent.node, priority)
                } else {
                    newEvent = oldEvent.node
                }
            } else {
                let childKey = ChildKey(key)
                let childPath = changePath.dropFirst()
                var newChild: Node?
                if oldEvent.isCompleteForChild(key) {
                    if let update = writes.eventCacheAfterServerOverwrite(changePath, serverNode: cache.server.node) {
                        newChild = oldEvent.node.child(childKey).setting(childPath, to: update)
                    } else {
                        newChild = oldEvent.node.child(childKey)
                    }
                } else {
                    newChild = writes.completeChild(childKey, server: cache.server)
                }
                if let newChild {
                    newEvent = filter.updateChild(oldEvent.node, childKey, newChild, childPath, source, changes)
                } else {
                    newEvent = oldEvent.node
                }
            }
        }
        return cache.updatingEvent(newEvent, complete: oldEvent.complete || changePath.isRoot, filtered: filter.filtersNodes)
    }

    private func serverOverwrite(_ old: ViewCache, _ changePath: Path, _ changed: Node, _ writes: WriteTreeRef,
                                 _ completeCache: Node?, filterServerNode: Bool, _ changes: ChildChangeAccumulator) -> ViewCache {
        let oldServer = old.server
        let serverFilter: NodeFilter = filterServerNode ? filter : filter.indexedFilter
        let newServer: Node
        if changePath.isRoot {
            newServer = serverFilter.updateFullNode(oldServer.node, changed, nil)
        } else if serverFilter.filtersNodes && !oldServer.filtered {
            let updated = oldServer.node.setting(changePath, to: changed)
            newServer = serverFilter.updateFullNode(oldServer.node, updated, nil)
        } else {
            let key = changePath.first!
            if !oldServer.isCompleteForPath(changePath) && changePath.count > 1 { return old }
            let childPath = changePath.dropFirst()
            let newChild = oldServer.node.child(key).setting(childPath, to: changed)
            if key == ".priority" {
                newServer = serverFilter.updatePriority(oldServer.node, newChild)
            } else {
                newServer = serverFilter.updateChild(oldServer.node, ChildKey(key), newChild, childPath, NoCompleteChildSource(), nil)
            }
        }
        let cache = old.updatingServer(newServer, complete: oldServer.complete || changePath.isRoot, filtered: serverFilter.filtersNodes)
        let source = WriteTreeCompleteChildSource(writes: writes, viewCache: cache, completeServerCache: completeCache)
        return eventCacheAfterServerEvent(cache, changePath, writes, source, changes)
    }

    private func userOverwrite(_ old: ViewCache, _ changePath: Path, _ changed: Node, _ writes: WriteTreeRef,
                               _ completeCache: Node?, _ changes: ChildChangeAccumulator) -> ViewCache {
        let oldEvent = old.event
        let source = WriteTreeCompleteChildSource(writes: writes, viewCache: old, completeServerCache: completeCache)
        if changePath.isRoot {
            let newEvent = filter.updateFullNode(old.event.node, changed, changes)
            return old.updatingEvent(newEvent, complete: true, filtered: filter.filtersNodes)
        }
        let key = changePath.first!
        if key == ".priority" {
            let newEvent = filter.updatePriority(old.event.node, changed)
            return old.updatingEvent(newEvent, complete: oldEvent.complete, filtered: oldEvent.filtered)
        }
        let childKey = ChildKey(key)
        let childPath = changePath.dropFirst()
        let oldChild = oldEvent.node.child(childKey)
        let newChild: Node
        if childPath.isRoot {
            newChild = changed
        } else if let complete = source.completeChild(childKey) {
            if childPath.last == ".priority" && complete.child(at: childPath.parent!).isEmpty {
                newChild = complete  // a priority on nothing changes nothing
            } else {
                newChild = complete.setting(childPath, to: changed)
            }
        } else {
            newChild = .empty
        }
        guard oldChild != newChild else { return old }
        let newEvent = filter.updateChild(oldEvent.node, childKey, newChild, childPath, source, changes)
        return old.updatingEvent(newEvent, complete: oldEvent.complete, filtered: filter.filtersNodes)
    }

    private func userMerge(_ cache: ViewCache, _ path: Path, _ children: PathTree<Node>, _ writes: WriteTreeRef,
                           _ serverCache: Node?, _ changes: ChildChangeAccumulator) -> ViewCache {
        // Children the view already has first, then the rest (which may be pulled into a window).
        var current = cache
        children.forEach { relative, node in
            let writePath = path.appending(relative)
            if cache.event.isCompleteForChild(writePath.first!) {
                current = userOverwrite(current, writePath, node, writes, serverCache, changes)
            }
        }
        children.forEach { relative, node in
            let writePath = path.appending(relative)
            if !cache.event.isCompleteForChild(writePath.first!) {
                current = userOverwrite(current, writePath, node, writes, serverCache, changes)
            }
        }
        return current
    }

    private func applyMerge(_ node: Node, _ merge: PathTree<Node>) -> Node {
        var node = node
        merge.forEach { relative, child in node = node.setting(relative, to: child) }
        return node
    }

    private func serverMerge(_ cache: ViewCache, _ path: Path, _ children: PathTree<Node>, _ writes: WriteTreeRef,
                             _ serverCache: Node?, filterServerNode: Bool, _ changes: ChildChangeAccumulator) -> ViewCache {
        // A merge into data we know nothing about tells us nothing complete.
        if cache.server.node.isEmpty && !cache.server.complete { return cache }
        var current = cache
        let mergeTree = path.isRoot ? children : PathTree<Node>().settingTree(path, children)
        let serverNode = cache.server.node
        for (key, childTree) in mergeTree.sortedChildren where serverNode.hasChild(key) {
            let newChild = applyMerge(serverNode.child(key), childTree)
            current = serverOverwrite(current, Path(keys: [key]), newChild, writes, serverCache, filterServerNode: filterServerNode, changes)
        }
        for (key, childTree) in mergeTree.sortedChildren where !serverNode.hasChild(key) {
            let unknownDeepMerge = !cache.server.isCompleteForChild(key) && childTree.value == nil
            if unknownDeepMerge { continue }
            let newChild = applyMerge(serverNode.child(key), childTree)
            current = serverOverwrite(current, Path(keys: [key]), newChild, writes, serverCache, filterServerNode: filterServerNode, changes)
        }
        return current
    }

    private func ackUserWrite(_ cache: ViewCache, _ ackPath: Path, _ affected: PathTree<Bool>, _ writes: WriteTreeRef,
                              _ completeCache: Node?, _ changes: ChildChangeAccumulator) -> ViewCache {
        if writes.shadowingWrite(ackPath) != nil { return cache }
        let filterServerNode = cache.server.filtered
        let server = cache.server
        if affected.value != nil {
            if (ackPath.isRoot && server.complete) || server.isCompleteForPath(ackPath) {
                return serverOverwrite(cache, ackPath, server.node.child(at: ackPath), writes, completeCache,
                                       filterServerNode: filterServerNode, changes)
            }
            if ackPath.isRoot {
                var merge = PathTree<Node>()
                for (key, child) in server.node.children { merge.set(Path(keys: [key.name]), child) }
                return serverMerge(cache, ackPath, merge, writes, completeCache, filterServerNode: filterServerNode, changes)
            }
            return cache
        }
        var merge = PathTree<Node>()
        affected.forEach { mergePath, _ in
            let serverPath = ackPath.appending(mergePath)
            if server.isCompleteForPath(serverPath) {
                merge.set(mergePath, server.node.child(at: serverPath))
            }
        }
        return serverMerge(cache, ackPath, merge, writes, completeCache, filterServerNode: filterServerNode, changes)
    }

    private func listenComplete(_ cache: ViewCache, _ path: Path, _ writes: WriteTreeRef, _ changes: ChildChangeAccumulator) -> ViewCache {
        let old = cache.server
        let updated = cache.updatingServer(old.node, complete: old.complete || path.isRoot, filtered: old.filtered)
        return eventCacheAfterServerEvent(updated, path, writes, NoCompleteChildSource(), changes)
    }

    private func revertUserWrite(_ cache: ViewCache, _ path: Path, _ writes: WriteTreeRef,
                                 _ completeServerCache: Node?, _ changes: ChildChangeAccumulator) -> ViewCache {
        if writes.shadowingWrite(path) != nil { return cache }
        let source = WriteTreeCompleteChildSource(writes: writes, viewCache: cache, completeServerCache: completeServerCache)
        let oldEvent = cache.event.node
        var newEvent: Node
        if path.isRoot || path.first == ".priority" {
            let node: Node
            if cache.server.complete {
                node = writes.completeEventCache(cache.completeServerNode) ?? .empty
            } else {
                node = writes.completeEventChildren(cache.server.node)
            }
            newEvent = filter.updateFullNode(oldEvent, node, changes)
        } else {
            let key = ChildKey(path.first!)
            var newChild = writes.completeChild(key, server: cache.server)
            if newChild == nil && cache.server.isCompleteForChild(key.name) {
                newChild = oldEvent.child(key)
            }
            if let newChild {
                newEvent = filter.updateChild(oldEvent, key, newChild, path.dropFirst(), source, changes)
            } else if cache.event.node.hasChild(key.name) {
                newEvent = filter.updateChild(oldEvent, key, .empty, path.dropFirst(), source, changes)
            } else {
                newEvent = oldEvent
            }
            if newEvent.isEmpty && cache.server.complete {
                let complete = writes.completeEventCache(cache.completeServerNode) ?? .empty
                if complete.isLeaf { newEvent = filter.updateFullNode(newEvent, complete, changes) }
            }
        }
        let complete = cache.server.complete || writes.shadowingWrite(.root) != nil
        return cache.updatingEvent(newEvent, complete: complete, filtered: filter.filtersNodes)
    }
}
