import RTDBData
import RTDBProtocol

/// A database that says how it answers a read (`get --explain`, `query --explain`): an
/// embedded one, or rtdb serve.
public protocol QueryExplaining: AnyObject, Sendable {
    /// Reads `path` with `query` as a `get` does, and describes how it was answered.
    func explain(_ path: Path, query: QueryParams?) async throws -> QueryExplanation
}
