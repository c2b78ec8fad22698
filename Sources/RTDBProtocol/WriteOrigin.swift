/// Which client sent a write, so that a server can apply it once though the client sends
/// it again (after a lost connection, or when another process took over a shared folder).
///
/// A client sends it only to a server whose hello offers it (`Handshake.exactlyOnce`), on
/// each set and update: `{"t":"d","d":{"r":7,"a":"p","b":{…},"o":{"c":"CLIENT","f":5}}}`.
/// The write is named by the client and its request number (`r`, the same each time it is
/// sent); `floor` says that every request of the client numbered below it has been answered
/// and will never be sent again, so the server need not remember those.
public struct WriteOrigin: Sendable, Equatable {
    public var client: String
    public var floor: Int

    /// A client name longer than this (in UTF-8 bytes) is refused: the server keeps it.
    public static let maximumClientLength = 64
    /// The largest request number a write with an origin may have.
    public static let maximumRequest = (1 << 62) - 1

    /// Whether a write numbered `request` may carry this origin: what a server keeps must
    /// stay in range (the wire's decoder checks the same).
    public func admits(request: Int) -> Bool {
        !client.isEmpty && client.utf8.count <= WriteOrigin.maximumClientLength
            && request >= 0 && request <= WriteOrigin.maximumRequest && floor >= 0 && floor <= request
    }

    public init(client: String, floor: Int) {
        self.client = client
        self.floor = floor
    }
}
