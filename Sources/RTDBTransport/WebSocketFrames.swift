import NIOCore
import NIOWebSocket
import RTDBProtocol

/// The WebSocket side both ends of a realtime connection share.
public enum WebSocketFrames {
    /// Encodes a message, splits it into frames if long, and writes them as text frames
    /// (masked from a client, as the WebSocket protocol requires).
    ///
    /// Every frame of one message is written in one turn of the channel's event loop, so the
    /// parts of a long message are never interleaved with another message sent from another
    /// thread meanwhile.
    public static func write(_ message: Message, on channel: Channel, masked: Bool) {
        let bytes = WireCodec.encodeBytes(message)
        let (count, ranges) = WireFraming.frameRanges(for: bytes)
        let send: @Sendable () -> Void = {
            func frame(_ piece: ArraySlice<UInt8>) {
                var buffer = channel.allocator.buffer(capacity: piece.count)
                buffer.writeBytes(piece)
                channel.write(WebSocketFrame(fin: true, opcode: .text, maskKey: masked ? .random() : nil, data: buffer), promise: nil)
            }
            if let count { frame(ArraySlice(String(count).utf8)) }
            for range in ranges { frame(bytes[range]) }
            channel.flush()
        }
        if channel.eventLoop.inEventLoop { send() } else { channel.eventLoop.execute(send) }
    }
}

extension WebSocketFrames {
    /// Says why in a close frame, then closes (as soon as what was written before is out).
    public static func close(_ channel: Channel, code: WebSocketErrorCode, reason: String, masked: Bool = false) {
        let send: @Sendable () -> Void = {
            var buffer = channel.allocator.buffer(capacity: 2 + reason.utf8.count)
            buffer.write(webSocketErrorCode: code)
            buffer.writeString(reason)
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: masked ? .random() : nil, data: buffer))
                .whenComplete { _ in channel.close(promise: nil) }
        }
        if channel.eventLoop.inEventLoop { send() } else { channel.eventLoop.execute(send) }
    }
}

/// Reads a realtime connection's WebSocket frames: text goes on, pings are answered, a
/// close frame or an error closes the channel, and `onClosed` runs when it is gone.
public final class RealtimeFrameHandler: ChannelInboundHandler {
    public typealias InboundIn = WebSocketFrame
    public typealias OutboundOut = WebSocketFrame

    private let masked: Bool
    private let onText: (String) -> Void
    private let onBinary: () -> Void
    private let onClosed: () -> Void

    public init(masked: Bool, onText: @escaping (String) -> Void, onBinary: @escaping () -> Void = {}, onClosed: @escaping () -> Void) {
        self.masked = masked
        self.onText = onText
        self.onBinary = onBinary
        self.onClosed = onClosed
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            let data = frame.unmaskedData
            // A text frame must be UTF-8 (RFC 6455 §8.1): nothing is replaced or guessed.
            guard let text = data.withUnsafeReadableBytes({ String(validating: $0.bindMemory(to: UInt8.self), as: UTF8.self) }) else {
                WebSocketFrames.close(context.channel, code: .dataInconsistentWithMessage, reason: "text frames must be UTF-8", masked: masked)
                return
            }
            onText(text)
        case .ping:
            var data = frame.unmaskedData
            var buffer = context.channel.allocator.buffer(capacity: data.readableBytes)
            buffer.writeBuffer(&data)
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: masked ? .random() : nil, data: buffer)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        case .binary:
            onBinary()
        default:
            break
        }
    }

    public func channelInactive(context: ChannelHandlerContext) {
        onClosed()
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
