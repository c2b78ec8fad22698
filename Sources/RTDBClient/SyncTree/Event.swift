import RTDBData

// Follows the Firebase JS SDK's Event and EventRegistration (core/view/Event.ts, EventRegistration.ts).

/// The kinds of event a listener can ask for.
public enum EventType: String, Sendable, CaseIterable {
    case value
    case childAdded = "child_added"
    case childChanged = "child_changed"
    case childRemoved = "child_removed"
    case childMoved = "child_moved"
}

/// A listener's registration: which events it wants and where they go.
/// Callbacks run on the client core's queue, in order; they cannot call the core
/// synchronously (its operations are `async`), so they never deadlock it.
public final class EventRegistration: Sendable {
    public let types: Set<EventType>
    let callback: @Sendable (Event) -> Void
    let cancel: @Sendable (DatabaseError) -> Void

    public init(types: Set<EventType> = Set(EventType.allCases), callback: @escaping @Sendable (Event) -> Void,
                cancel: @escaping @Sendable (DatabaseError) -> Void = { _ in }) {
        self.types = types
        self.callback = callback
        self.cancel = cancel
    }

    func responds(to type: EventType) -> Bool { types.contains(type) }
}

/// An event raised for a registration: what happened, to which child, after which sibling.
public struct Event: Sendable {
    public var type: EventType
    /// The listened location.
    public var path: Path
    /// The child's key for child events.
    public var key: String?
    /// The previous sibling's key in query order (child_added, child_changed, child_moved).
    public var previousKey: String?
    /// The new value (for child_removed, the removed value).
    public var node: Node
    public let registration: EventRegistration
}
