import RTDBData

/// One entry of a multi-path update: a path relative to the update's location and its value.
public struct UpdateEntry: Sendable, Equatable {
    public var path: Path
    public var value: Node
    public init(_ path: Path, _ value: Node) { self.path = path; self.value = value }
}
