import NIOCore
import NIOWebSocket
import RTDBData
import RTDBProtocol

/// The WebSocket side both ends of a realtime connection share.
public enum WebSocketFrames {}

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
    private let onText: ([UInt8]) -> Void
    private let onBinary: () -> Void
    private let onClosed: () -> Void

    /// `onText`: a text frame's bytes, checked to be UTF-8.
    public init(masked: Bool, onText: @escaping ([UInt8]) -> Void, onBinary: @escaping () -> Void = {}, onClosed: @escaping () -> Void) {
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
            // A text frame must be UTF-8 (RFC 6455 §8.1): nothing is replaced or guessed. The
            // bytes go on as they are (a String of them was made only to be turned back).
            guard let text = data.withUnsafeReadableBytes({ raw -> [UInt8]? in
                let bytes = raw.bindMemory(to: UInt8.self)
                return JSONReader.isValidUTF8(bytes) ? Array(bytes) : nil
            }) else {
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
