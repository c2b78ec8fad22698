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
    /// Where malformed messages are reported (never with the message itself, which may
    /// carry a credential).
    private let log: @Sendable (String) -> Void

    init(channel: Channel, log: @escaping @Sendable (String) -> Void) {
        self.channel = channel
        self.log = log
    }

    func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
        self.onMessage = onMessage
        self.onClose = onClose
    }

    func send(_ message: Message) {
        WebSocketFrames.write(message, on: channel, masked: false)
    }

    func close() {
        channel.close(promise: nil)
    }

    /// A text frame arrived (on the channel's event loop).
    func received(_ text: String) {
        let message: String?
        do { message = try assembler.receive(text) } catch {
            log("closing the connection from \(channel.remoteAddress?.description ?? "?"): \(error)")
            send(.serverError("\(error)"))
            WebSocketFrames.close(channel, code: .messageTooLarge, reason: "message too large")
            return
        }
        guard let message else { return }
        do {
            let decoded = try WireCodec.decode(message)
            onMessage?(decoded)
        } catch let error as WireError {
            log("malformed message from \(channel.remoteAddress?.description ?? "?"): \(error.message)")
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

extension WebSocketTransport {
    /// The handler that feeds this transport from the channel's frames.
    var frameHandler: RealtimeFrameHandler {
        RealtimeFrameHandler(masked: false, onText: { [self] in received($0) },
                             onBinary: { [self] in send(.serverError("binary frames are not part of the protocol: send text")) },
                             onClosed: { [self] in closedByPeer() })
    }
}
