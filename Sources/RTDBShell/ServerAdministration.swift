import RTDBData

/// What the shell asks of a server beyond the realtime protocol: its security rules, read
/// and replaced over REST with the credential the shell holds.
public protocol ServerAdministration: AnyObject, Sendable {
    /// A server on this machine, where a token made up by `auth --uid` means something.
    var isLocal: Bool { get }
    /// The rules in force, as the server keeps them (comments included).
    func readRules() async throws -> String
    /// Replaces the rules; throws the server's reason when it refuses them.
    func writeRules(_ text: String) async throws
    /// What the requests made of each part of the rules since they were set
    /// (`/.inspect/coverage.json`: `RuleCoverageReport.json`); throws when the server keeps
    /// no coverage (hosted Firebase).
    func ruleCoverage() async throws -> JSONValue
    /// The server's namespaces, sorted; throws when the server lists none (hosted Firebase).
    func namespaces() async throws -> [String]
    /// The credential REST requests carry from now on; nil for none.
    func useCredential(_ token: String?, google: Bool)
    /// The user gave a credential or dropped it (`auth`, `logout`): one the shell was started
    /// with (a service account's tokens) is no longer fetched or renewed.
    func userChoseCredential()
}
