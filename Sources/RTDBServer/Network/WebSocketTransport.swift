import NIOCore
import NIOWebSocket
import RTDBData
import RTDBProtocol

/// The server's end of a realtime connection over a WebSocket: encodes, frames and sends
/// messages; joins and decodes what arrives. A malformed message gets an error answer and
/// costs nobody else anything.
final class WebSocketTransport: Transport, @unchecked Sendable {
    let channel: Channel
    private var onMessage: (@Sendable (Message) -> Void)?
    private var onClose: (@Sendable () -> Void)?
    private var assembler = WireFraming.Assembler()
    private var closed = false

    init(channel: Channel) { self.channel = channel }

    func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
        self.onMessage = onMessage
        self.onClose = onClose
    }

    func send(_ message: Message) {
        let channel = self.channel
        for frame in WireFraming.frames(for: WireCodec.encode(message)) {
            var buffer = channel.allocator.buffer(capacity: frame.utf8.count)
            buffer.writeString(frame)
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: buffer), promise: nil)
        }
    }

    func close() {
        channel.close(promise: nil)
    }

    /// A text frame arrived (on the channel's event loop).
    func received(_ text: String) {
        guard let message = assembler.receive(text) else { return }
        do {
            let decoded = try WireCodec.decode(message)
            onMessage?(decoded)
        } catch let error as WireError {
            if let id = error.requestID {
                send(.response(id: id, .error("invalid_request", error.message)))
            } else {
                send(.serverError(error.message))
            }
        } catch {
            send(.serverError("\(error)"))
        }
    }

    func closedByPeer() {
        guard !closed else { return }
        closed = true
        onClose?()
    }
}

/// Reads WebSocket frames for one realtime connection.
final class WebSocketSessionHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let transport: WebSocketTransport

    init(transport: WebSocketTransport) { self.transport = transport }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            var data = frame.unmaskedData
            transport.received(data.readString(length: data.readableBytes) ?? "")
        case .ping:
            var data = frame.unmaskedData
            var buffer = context.channel.allocator.buffer(capacity: data.readableBytes)
            buffer.writeBuffer(&data)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: buffer)), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        case .binary:
            transport.send(.serverError("binary frames are not part of the protocol: send text"))
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        transport.closedByPeer()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
