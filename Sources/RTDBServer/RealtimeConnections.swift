import Foundation
import NIOCore
import RTDBTransport

/// The realtime connections a server has open, so that shutting down can stop reading from
/// them, let the databases answer what was read, and close each after its answers.
///
/// `@unchecked Sendable`: the table is guarded by `lock`.
final class RealtimeConnections: @unchecked Sendable {
    private let lock = NSLock()
    private var channels: [ObjectIdentifier: Channel] = [:]

    /// Keeps `channel` until it closes.
    func add(_ channel: Channel) {
        lock.withLock { channels[ObjectIdentifier(channel)] = channel }
        channel.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            _ = lock.withLock { self.channels.removeValue(forKey: ObjectIdentifier(channel)) }
        }
    }

    private var all: [Channel] { lock.withLock { Array(channels.values) } }

    /// Reads nothing more from any connection; returns once each has stopped.
    func stopReading() {
        for channel in all { try? channel.setOption(ChannelOptions.autoRead, value: false).wait() }
    }

    /// Closes every connection with a WebSocket close frame written after everything queued
    /// for it; waits for them to close, for at most `patience` (a peer that reads nothing
    /// holds its connection's writes for ever).
    func closeAll(patience: TimeInterval) {
        let channels = all
        let closed = DispatchGroup()
        for channel in channels {
            closed.enter()
            channel.closeFuture.whenComplete { _ in closed.leave() }
            WebSocketFrames.close(channel, code: .goingAway, reason: "the server is shutting down")
        }
        _ = closed.wait(timeout: .now() + patience)
    }
}
