import RTDBProtocol

/// A request the server (or the client core) refused, as the official clients report it:
/// the upper-cased status code and the server's explanation.
public struct DatabaseError: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: String
    public let message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public init(status: ResponseStatus, message: String) {
        self.init(code: status.rawValue.uppercased(), message: message)
    }

    /// A read made while offline that the client could not answer itself.
    public static let offline = DatabaseError(status: .disconnected, message: "Client is offline.")

    public var description: String { message.isEmpty ? code : "\(code): \(message)" }
}
