/// A child's place in an ordering (a query index): its ordering value and its key.
public struct IndexEntry: TreeElement {
    public let value: Node
    public let key: ChildKey

    public init(value: Node, key: ChildKey) {
        self.value = value
        self.key = key
    }

    public static func order(_ a: IndexEntry, _ b: IndexEntry) -> Int {
        let c = Index.compareValues(a.value, b.value)
        return c != 0 ? c : ChildKey.compare(a.key, b.key)
    }

    /// What a stored index reads back for a value that is an object: objects tie in value
    /// order, so a node file keeps only that the value is one (see `NodeFile`).
    public static let anObject = Node(children: ChildMap(unsorted: [(ChildKey("object"), Node(true))]))
}
