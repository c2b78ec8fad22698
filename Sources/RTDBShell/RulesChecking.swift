import RTDBRules

/// A database that can say what its rules would decide of a request without making it
/// (`rules check`): a server (its owner asks), or an embedded database (with rules given).
public protocol RulesChecking: AnyObject, Sendable {
    /// Whether the database has rules of its own to check against; an embedded one has
    /// none (its owner may do anything), so a question to it must bring its rules.
    var hasRules: Bool { get }
    func checkRules(_ question: RuleQuestion) async throws -> RuleAnswer
}
