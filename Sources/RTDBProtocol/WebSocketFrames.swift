import NIOCore
import NIOWebSocket

/// The WebSocket side both ends of a realtime connection share.
public enum WebSocketFrames {
    /// Encodes a message, splits it into frames if long, and writes them as text frames
    /// (masked from a client, as the WebSocket protocol requires).
    public static func write(_ message: Message, on channel: Channel, masked: Bool) {
        for frame in WireFraming.frames(for: WireCodec.encode(message)) {
            var buffer = channel.allocator.buffer(capacity: frame.utf8.count)
            buffer.writeString(frame)
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, maskKey: masked ? .random() : nil, data: buffer), promise: nil)
        }
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
            var data = frame.unmaskedData
            onText(data.readString(length: data.readableBytes) ?? "")
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
