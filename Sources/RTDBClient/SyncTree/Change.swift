import RTDBData

// Follows the Firebase JS SDK's Change and ChildChangeAccumulator (packages/database/src/core/view/Change.ts, ChildChangeAccumulator.ts).

/// One change to a view's event cache, before it becomes events for registrations.
struct Change {
    var type: EventType
    var node: Node
    var key: ChildKey?
    var oldNode: Node?
    var previousKey: ChildKey?

    static func value(_ node: Node) -> Change { Change(type: .value, node: node) }
    static func added(_ key: ChildKey, _ node: Node) -> Change { Change(type: .childAdded, node: node, key: key) }
    static func removed(_ key: ChildKey, _ node: Node) -> Change { Change(type: .childRemoved, node: node, key: key) }
    static func changed(_ key: ChildKey, _ node: Node, old: Node) -> Change { Change(type: .childChanged, node: node, key: key, oldNode: old) }
    static func moved(_ key: ChildKey, _ node: Node) -> Change { Change(type: .childMoved, node: node, key: key) }
}

/// Collects child changes during one operation, merging several changes to the same child
/// into one (removed then added is changed; added then removed is nothing; …).
final class ChildChangeAccumulator {
    private var order: [ChildKey] = []
    private var changes: [ChildKey: Change] = [:]

    func track(_ change: Change) {
        let key = change.key!
        guard let old = changes[key] else {
            order.append(key)
            changes[key] = change
            return
        }
        switch (change.type, old.type) {
        case (.childAdded, .childRemoved):
            changes[key] = .changed(key, change.node, old: old.node)
        case (.childRemoved, .childAdded):
            changes[key] = nil
            order.removeAll { $0 == key }
        case (.childRemoved, .childChanged):
            changes[key] = .removed(key, old.oldNode!)
        case (.childChanged, .childAdded):
            changes[key] = .added(key, change.node)
        case (.childChanged, .childChanged):
            changes[key] = .changed(key, change.node, old: old.oldNode!)
        default:
            preconditionFailure("impossible change sequence \(old.type) then \(change.type) for \(key)")
        }
    }

    var all: [Change] { order.compactMap { changes[$0] } }
}
