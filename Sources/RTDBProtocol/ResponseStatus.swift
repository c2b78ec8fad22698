/// The status of a server's answer (`s` in a response): `ok`, or why a request was refused.
/// An open set: a server may send statuses this client does not name, and they are kept as
/// they came.
public struct ResponseStatus: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    public static let ok: ResponseStatus = "ok"
    /// A compare-and-set whose hash no longer matches the data (a transaction's retry).
    public static let dataStale: ResponseStatus = "datastale"
    public static let permissionDenied: ResponseStatus = "permission_denied"
    /// The server accepted the write but could not make it durable.
    public static let writeFailed: ResponseStatus = "write_failed"
    /// The client dropped a queued write before the server answered it (purgeOutstandingWrites).
    public static let writeCanceled: ResponseStatus = "write_canceled"
    /// A guarded update the client did not send: the server does not check guards
    /// (`UpdateGuard`). The client's own status; no server sends it.
    public static let guardsUnchecked: ResponseStatus = "guards_unchecked"
    /// The client is offline and has nothing cached to answer from.
    public static let disconnected: ResponseStatus = "disconnected"
    /// A request the server could not read or does not take.
    public static let invalidRequest: ResponseStatus = "invalid_request"
    /// A value the database's rules refuse (a key name, a size).
    public static let invalidData: ResponseStatus = "invalid_data"
    public static let invalidPath: ResponseStatus = "invalid_path"
    public static let unavailable: ResponseStatus = "unavailable"
    /// A read whose answer is larger than one message may be.
    public static let tooBig: ResponseStatus = "too_big"
    public static let invalidToken: ResponseStatus = "invalid_token"
    public static let expiredToken: ResponseStatus = "expired_token"
}
