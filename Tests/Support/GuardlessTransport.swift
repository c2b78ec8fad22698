import RTDBProtocol

/// A server's end of a connection whose handshake does not offer guarded merges, as hosted
/// Firebase's and its emulator's do not: a client must not send it one.
public final class GuardlessTransport: Transport {
    private let inner: Transport

    public init(_ inner: Transport) { self.inner = inner }

    public func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
        inner.start(onMessage: onMessage, onClose: onClose)
    }

    public func send(_ message: Message) {
        guard case .handshake(var hello) = message else { return inner.send(message) }
        hello.guardedMerge = false
        inner.send(.handshake(hello))
    }

    public func close() { inner.close() }
}
