import Foundation
import Synchronization

/// The two ends of an in-process connection: embedded mode's client and server exchange the
/// same protocol messages as over a socket, without serialising them.
public final class InProcessTransport: Transport, Sendable {
    private struct State {
        weak var peer: InProcessTransport?
        var onMessage: (@Sendable (Message) -> Void)?
        var onClose: (@Sendable () -> Void)?
        var backlog: [Message] = []
        var closed = false
    }

    private let state = Mutex(State())

    private init() {}

    /// A connected pair: what one end sends, the other receives.
    public static func pair() -> (client: InProcessTransport, server: InProcessTransport) {
        let a = InProcessTransport(), b = InProcessTransport()
        a.state.withLock { $0.peer = b }
        b.state.withLock { $0.peer = a }
        return (a, b)
    }

    public func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
        let (pending, closedAlready) = state.withLock { state in
            state.onMessage = onMessage
            state.onClose = onClose
            defer { state.backlog = [] }
            return (state.backlog, state.closed)
        }
        for message in pending { onMessage(message) }
        // Closed before it was started (a server that hung up at once): say so now.
        if closedAlready { onClose() }
    }

    public func send(_ message: Message) {
        state.withLock { $0.peer }?.receive(message)
    }

    private func receive(_ message: Message) {
        let handler: (@Sendable (Message) -> Void)? = state.withLock { state in
            guard !state.closed else { return nil }
            guard let handler = state.onMessage else {
                state.backlog.append(message)  // arrived before start(); delivered in order by start()
                return nil
            }
            return handler
        }
        handler?(message)
    }

    public func close() {
        let other = state.withLock { $0.peer }
        closeLocally()
        other?.closeLocally()
    }

    private func closeLocally() {
        let handler: (@Sendable () -> Void)? = state.withLock { state in
            guard !state.closed else { return nil }
            state.closed = true
            defer {
                state.onMessage = nil
                state.onClose = nil
            }
            return state.onClose
        }
        handler?()
    }
}
