import Foundation
import NIOCore
import RTDBTransport
import Synchronization

/// The realtime connections a server has open, so that shutting down can stop reading from
/// them, let the databases answer what was read, and close each after its answers.
final class RealtimeConnections: Sendable {
    private struct State {
        var transports: [ObjectIdentifier: WebSocketTransport] = [:]
        /// Set by `stopReading`: no connection is taken after it.
        var stopping = false
    }

    private let state = Mutex(State())

    /// Keeps `transport` until its channel closes; false (and nothing kept) once the server
    /// is shutting down.
    func add(_ transport: WebSocketTransport) -> Bool {
        let channel = transport.channel
        let key = ObjectIdentifier(channel)
        let taken = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.transports[key] = transport
            return true
        }
        guard taken else { return false }
        channel.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            _ = state.withLock { $0.transports.removeValue(forKey: key) }
        }
        return true
    }

    private var all: [WebSocketTransport] { state.withLock { Array($0.transports.values) } }

    /// Reads nothing more from any connection, whatever their flow control would do, and
    /// takes no new one; returns once each has stopped.
    func stopReading() {
        state.withLock { $0.stopping = true }
        for transport in all { try? transport.stopReading().wait() }
    }

    /// Closes every connection with a WebSocket close frame written after everything queued
    /// for it; waits for them to close, for at most `patience` (a peer that reads nothing
    /// holds its connection's writes for ever).
    func closeAll(patience: TimeInterval) {
        let channels = all.map(\.channel)
        let closed = DispatchGroup()
        for channel in channels {
            closed.enter()
            channel.closeFuture.whenComplete { _ in closed.leave() }
            WebSocketFrames.close(channel, code: .goingAway, reason: "the server is shutting down")
        }
        _ = closed.wait(timeout: .now() + patience)
    }
}
