import Synchronization

/// A message's wire bytes, made the first time a transport asks and then shared: a push
/// fanned out to many connections is encoded once, and every connection's queue holds the
/// same bytes (an array shared until written) instead of a copy each.
public final class SharedEncoding: Sendable {
    public let message: Message
    private let encoded = Mutex<[UInt8]?>(nil)

    public init(_ message: Message) {
        self.message = message
    }

    /// The message's JSON, as `WireCodec.encodeBytes` writes it.
    public var bytes: [UInt8] {
        encoded.withLock { encoded in
            if let encoded { return encoded }
            let bytes = WireCodec.encodeBytes(message)
            encoded = bytes
            return bytes
        }
    }
}
