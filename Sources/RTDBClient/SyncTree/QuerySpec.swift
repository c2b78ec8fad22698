import RTDBData

/// A location with query parameters: what a listener listens to.
public struct QuerySpec: Sendable, Equatable, CustomStringConvertible {
    public var path: Path
    public var params: QueryParams
    public init(path: Path, params: QueryParams = .default) {
        self.path = path
        self.params = params
    }
    public var identifier: String { params.identifier }
    /// Identifies a tagged query across the sync tree.
    var key: String { path.description + "$" + identifier }
    public var description: String { "\(path) \(identifier)" }
}
