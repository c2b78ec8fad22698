import Foundation
import RTDBClient

/// Where the shell's database lives and how it was opened; closed on exit.
public protocol DatabaseConnection: AnyObject, Sendable {
    var repo: Repo { get }
    /// A short description for the banner and `status`.
    var location: String { get }
    /// The kind of credential in use, for `status`: never the credential itself.
    var credential: String { get }
    func close() async
}
