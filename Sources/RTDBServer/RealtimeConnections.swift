import Foundation
import NIOCore
import RTDBTransport

/// The realtime connections a server has open, so that shutting down can stop reading from
/// them, let the databases answer what was read, and close each after its answers.
///
/// `@unchecked Sendable`: the table is guarded by `lock`.
final class RealtimeConnections: @unchecked Sendable {
    private let lock = NSLock()
    private var transports: [ObjectIdentifier: WebSocketTransport] = [:]
    /// Set by `stopReading`: no connection is taken after it.
    private var stopping = false

    /// Keeps `transport` until its channel closes; false (and nothing kept) once the server
    /// is shutting down.
    func add(_ transport: WebSocketTransport) -> Bool {
        let channel = transport.channel
        let key = ObjectIdentifier(channel)
        let taken = lock.withLock { () -> Bool in
            guard !stopping else { return false }
            transports[key] = transport
            return true
        }
        guard taken else { return false }
        channel.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            _ = lock.withLock { self.transports.removeValue(forKey: key) }
        }
        return true
    }

    private var all: [WebSocketTransport] { lock.withLock { Array(transports.values) } }

    /// Reads nothing more from any connection, whatever their flow control would do, and
    /// takes no new one; returns once each has stopped.
    func stopReading() {
        lock.withLock { stopping = true }
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
