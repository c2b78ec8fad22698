import Foundation
import NIOCore
import NIOWebSocket
import RTDBProtocol

/// Writes one connection's realtime messages as WebSocket frames, many at a time: messages
/// sent from any thread are encoded there and queued; one turn of the event loop writes
/// everything queued by then and flushes once. A pipelined writer or a busy listener costs
/// one event-loop hop and one system call per batch, not per message, and messages keep
/// the order they were sent in, the frames of a long one together.
///
/// `@unchecked Sendable`: the queue is guarded by `lock`.
public final class FrameWriter: @unchecked Sendable {
    private let channel: Channel
    private let masked: Bool
    private let lock = NSLock()
    private var queued: [(Message, [UInt8])] = []
    private var scheduled = false
    /// Runs on the event loop for each message as it is written (the server counts answers).
    private let onWrite: (@Sendable (Message) -> Void)?

    /// `masked`: a client's frames are masked, as the WebSocket protocol requires.
    public init(channel: Channel, masked: Bool, onWrite: (@Sendable (Message) -> Void)? = nil) {
        self.channel = channel
        self.masked = masked
        self.onWrite = onWrite
    }

    public func write(_ message: Message) {
        let bytes = WireCodec.encodeBytes(message)
        let schedule = lock.withLock { () -> Bool in
            queued.append((message, bytes))
            defer { scheduled = true }
            return !scheduled
        }
        if schedule { channel.eventLoop.execute { self.drain() } }
    }

    private func drain() {
        let batch = lock.withLock { () -> [(Message, [UInt8])] in
            defer { queued = []; scheduled = false }
            return queued
        }
        for (message, bytes) in batch {
            let (count, ranges) = WireFraming.frameRanges(for: bytes)
            if let count { frame(ArraySlice(String(count).utf8)) }
            for range in ranges { frame(bytes[range]) }
            onWrite?(message)
        }
        channel.flush()
    }

    private func frame(_ piece: ArraySlice<UInt8>) {
        var buffer = channel.allocator.buffer(capacity: piece.count)
        buffer.writeBytes(piece)
        channel.write(WebSocketFrame(fin: true, opcode: .text, maskKey: masked ? .random() : nil, data: buffer), promise: nil)
    }
}
