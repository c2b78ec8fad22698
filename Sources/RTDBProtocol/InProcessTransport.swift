import Foundation

/// The two ends of an in-process connection: embedded mode's client and server exchange the
/// same protocol messages as over a socket, without serialising them.
///
/// `@unchecked Sendable`: guarded by `lock`, which the compiler cannot see.
public final class InProcessTransport: Transport, @unchecked Sendable {
    private let lock = NSLock()
    private weak var peer: InProcessTransport?
    private var onMessage: (@Sendable (Message) -> Void)?
    private var onClose: (@Sendable () -> Void)?
    private var backlog: [Message] = []
    private var closed = false

    private init() {}

    /// A connected pair: what one end sends, the other receives.
    public static func pair() -> (client: InProcessTransport, server: InProcessTransport) {
        let a = InProcessTransport(), b = InProcessTransport()
        a.peer = b
        b.peer = a
        return (a, b)
    }

    public func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
        lock.lock()
        self.onMessage = onMessage
        self.onClose = onClose
        let pending = backlog
        backlog = []
        let closedAlready = closed
        lock.unlock()
        for message in pending { onMessage(message) }
        // Closed before it was started (a server that hung up at once): say so now.
        if closedAlready { onClose() }
    }

    public func send(_ message: Message) {
        peer?.receive(message)
    }

    private func receive(_ message: Message) {
        lock.lock()
        guard !closed else { lock.unlock(); return }
        guard let handler = onMessage else {
            backlog.append(message)  // arrived before start(); delivered in order by start()
            lock.unlock()
            return
        }
        lock.unlock()
        handler(message)
    }

    public func close() {
        let other = peer
        closeLocally()
        other?.closeLocally()
    }

    private func closeLocally() {
        lock.lock()
        guard !closed else { lock.unlock(); return }
        closed = true
        let handler = onClose
        onMessage = nil
        onClose = nil
        lock.unlock()
        handler?()
    }
}
