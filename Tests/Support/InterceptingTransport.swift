import RTDBProtocol

/// A server's end of a connection that runs `before` on each message from the client before
/// the server gets it: a test puts another client's write between a client's read and its
/// write, in that order, every time.
public final class InterceptingTransport: Transport {
    private let inner: Transport
    private let before: @Sendable (Message) -> Void

    public init(_ inner: Transport, before: @escaping @Sendable (Message) -> Void) {
        self.inner = inner
        self.before = before
    }

    public func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
        let before = self.before
        inner.start(onMessage: { message in
            before(message)
            onMessage(message)
        }, onClose: onClose)
    }

    public func send(_ message: Message) { inner.send(message) }
    public func close() { inner.close() }
}
