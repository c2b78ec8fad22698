import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOWebSocket
import RTDBProtocol
import Synchronization

/// Writes one connection's realtime messages as WebSocket frames, many at a time: messages
/// sent from any thread are encoded there and queued; one turn of the event loop writes
/// everything queued by then and flushes once. A pipelined writer or a busy listener costs
/// one event-loop hop and one system call per batch, not per message, and messages keep
/// the order they were sent in, the frames of a long one together.
public final class FrameWriter: Sendable {
    private let channel: Channel
    private let masked: Bool
    private struct Queue {
        var queued: [(Message, [UInt8])] = []
        var scheduled = false
        /// Set once the channel has closed: nothing more is queued for it (its event loop may
        /// be gone too, and cannot take the work).
        var finished = false
    }
    private let queue = Mutex(Queue())
    static let bufferSize = 1 << 16
    /// The longest frame header: 2 bytes, an 8-byte length, a 4-byte masking key.
    static let maxHeaderBytes = 14
    /// Runs on the event loop for each message as it is written (the server counts answers).
    private let onWrite: (@Sendable (Message) -> Void)?

    /// The largest answer sent (a server's: what its peers take in one message).
    private let maxAnswerBytes: Int

    /// `masked`: a client's frames are masked, as the WebSocket protocol requires.
    public init(channel: Channel, masked: Bool, maxAnswerBytes: Int = WireFraming.maxResponseBytes,
                onWrite: (@Sendable (Message) -> Void)? = nil) {
        self.channel = channel
        self.masked = masked
        self.maxAnswerBytes = maxAnswerBytes
        self.onWrite = onWrite
        channel.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            queue.withLock { $0.finished = true; $0.queued = [] }
        }
    }

    public func write(_ message: Message) {
        // Only an answer is held to the limit. Anything else goes whole, encoded once: a
        // client's write, or a change pushed to a listen that has grown this large (the peer
        // drops the connection over it and listens again, which is then refused).
        guard case .response(let id, _) = message else { return enqueue(message, WireCodec.encodeBytes(message)) }
        if let bytes = WireCodec.encodeBytes(message, limit: maxAnswerBytes) { return enqueue(message, bytes) }
        // A peer would drop the connection over it, then ask again; refused as the hosted
        // database refuses such reads.
        let refusal = Message.response(id: id, .error(.tooBig, FrameWriter.tooBigMessage(maxAnswerBytes)))
        enqueue(refusal, WireCodec.encodeBytes(refusal))
    }

    /// Writes a push whose bytes other connections share (not an answer: no limit applies).
    public func write(sharing encoding: SharedEncoding) {
        guard case .push = encoding.message else { return write(encoding.message) }
        enqueue(encoding.message, encoding.bytes)
    }

    /// Writes `message` if it is at most the largest answer; false, and nothing written, if not.
    public func writeIfItFits(_ message: Message) -> Bool {
        guard let bytes = WireCodec.encodeBytes(message, limit: maxAnswerBytes) else { return false }
        enqueue(message, bytes)
        return true
    }

    /// Why a read was refused: its answer is over `limit` bytes.
    public static func tooBigMessage(_ limit: Int) -> String {
        "The data requested exceeds the maximum size that can be accessed with a single request (\(limit >> 20) MB); read its children instead"
    }

    private func enqueue(_ message: Message, _ bytes: [UInt8]) {
        // Scheduled under the lock: the close that sets `finished` runs on the event loop
        // before it stops, so work scheduled before then finds it running.
        queue.withLock { queue in
            guard !queue.finished else { return }
            queue.queued.append((message, bytes))
            if !queue.scheduled {
                queue.scheduled = true
                channel.eventLoop.execute { self.drain() }
            }
        }
    }

    private func drain() {
        let started = StageClock.begin()
        defer { StageClock.end(masked ? .clientSocketWrite : .serverSocketWrite, since: started) }
        let batch = queue.withLock { queue -> [(Message, [UInt8])] in
            defer { queue.queued = []; queue.scheduled = false }
            return queue.queued
        }
        // Every frame of the batch in one buffer, written once below the frame encoder: a
        // frame written on its own costs a buffer, a trip through the pipeline and the
        // encoder's header buffer, per message.
        var frames: [ArraySlice<UInt8>] = []
        frames.reserveCapacity(batch.count)
        for (_, bytes) in batch {
            let (count, ranges) = WireFraming.frameRanges(for: bytes)
            if let count { frames.append(ArraySlice(String(count).utf8)) }
            for range in ranges { frames.append(bytes[range]) }
        }
        // The frame encoder's place in the pipeline, from where bytes go on to the socket.
        // Without it the pipeline is being torn down, and nothing more reaches the peer.
        let encoder = try? channel.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        let keys = masked ? FrameWriter.randomBytes(4 * frames.count) : []
        // Buffers of at most 64 KiB (a frame is smaller): a buffer's memory is its size
        // rounded up to a power of two, and a slow reader's unsent answers must cost what
        // they weigh, not up to twice that.
        var i = 0
        while i < frames.count {
            var end = i, size = 0
            while end < frames.count && (end == i || size + frames[end].count + FrameWriter.maxHeaderBytes <= FrameWriter.bufferSize) {
                size += frames[end].count + FrameWriter.maxHeaderBytes
                end += 1
            }
            var buffer = channel.allocator.buffer(capacity: size)
            for j in i..<end { append(frames[j], maskedWith: masked ? keys[(4 * j)..<(4 * j + 4)] : nil, to: &buffer) }
            encoder?.write(NIOAny(buffer), promise: nil)
            i = end
        }
        for (message, _) in batch { onWrite?(message) }
        channel.flush()
    }

    /// One final text frame (RFC 6455 §5.2): header, then the payload, masked for a client.
    private func append(_ payload: ArraySlice<UInt8>, maskedWith key: ArraySlice<UInt8>?, to buffer: inout ByteBuffer) {
        let maskBit: UInt8 = key == nil ? 0 : 0x80
        buffer.writeInteger(UInt8(0x81))  // FIN, text
        switch payload.count {
        case ..<126: buffer.writeInteger(maskBit | UInt8(payload.count))
        case ..<65536: buffer.writeInteger(maskBit | 126); buffer.writeInteger(UInt16(payload.count))
        default: buffer.writeInteger(maskBit | 127); buffer.writeInteger(UInt64(payload.count))
        }
        guard let key else {
            buffer.writeBytes(payload)
            return
        }
        buffer.writeBytes(key)
        let k0 = key[key.startIndex], k1 = key[key.startIndex + 1], k2 = key[key.startIndex + 2], k3 = key[key.startIndex + 3]
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: payload.count) { out in
            for (i, byte) in payload.enumerated() {
                switch i & 3 {
                case 0: out[i] = byte ^ k0
                case 1: out[i] = byte ^ k1
                case 2: out[i] = byte ^ k2
                default: out[i] = byte ^ k3
                }
            }
            return payload.count
        }
    }

    /// Unpredictable bytes for masking keys: a batch's worth from a system call per 256
    /// (`getentropy`'s most), where drawing each key alone made a call per frame.
    private static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let filled = bytes.withUnsafeMutableBytes { raw -> Bool in
            var start = 0
            while start < raw.count {
                let piece = UnsafeMutableRawBufferPointer(rebasing: raw[start..<min(raw.count, start + 256)])
                guard let base = piece.baseAddress, getentropy(base, piece.count) == 0 else { return false }
                start += piece.count
            }
            return true
        }
        if !filled {
            var generator = SystemRandomNumberGenerator()
            for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
        }
        return bytes
    }
}
