import RTDBProtocol

/// A server's end of an in-process connection with a network connection's limit, as a
/// WebSocket server's (whose real limit, 256 MB, is too big for a test): a message sent with
/// `sendIfItFits` goes only if its encoding is at most `maxBytes`, and an answer larger than
/// that is replaced by a `too_big` refusal.
public final class MessageLimitedTransport: Transport {
    private let inner: Transport
    private let maxBytes: Int

    public init(_ inner: Transport, maxBytes: Int) {
        self.inner = inner
        self.maxBytes = maxBytes
    }

    public func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
        inner.start(onMessage: onMessage, onClose: onClose)
    }

    public func send(_ message: Message) {
        guard case .response(let id, _) = message, WireCodec.encodeBytes(message).count > maxBytes else { return inner.send(message) }
        inner.send(.response(id: id, .error(.tooBig, "the answer is over \(maxBytes) bytes")))
    }

    public func sendIfItFits(_ message: Message) -> Bool {
        guard WireCodec.encodeBytes(message).count <= maxBytes else { return false }
        inner.send(message)
        return true
    }

    public func close() { inner.close() }
}
