import RTDBData
import RTDBProtocol

/// `rules check`: a request to put to the rules without making it, and as whom.
public struct RulesCheck: Equatable, Sendable {
    public enum Operation: Equatable, Sendable {
        case read
        case write(Node)
        case update([UpdateEntry])
    }

    public var operation: Operation
    public var path: Path
    /// The user the rules see (`--as`), with the claims of `--claims`; nil for no one.
    public var uid: String?
    public var claims: JSONValue = .object([])
    /// Rules to judge by instead of the database's (`--rules`).
    public var rulesFile: String?
}
