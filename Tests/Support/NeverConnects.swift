import RTDBProtocol

/// A transport whose connection never comes up: a client on it stays offline.
public final class NeverConnects: Transport {
    public init() {}
    public func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {}
    public func send(_ message: Message) {}
    public func close() {}
}
