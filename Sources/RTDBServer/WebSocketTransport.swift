import NIOCore
import NIOWebSocket
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBTransport

/// The server's end of a realtime connection over a WebSocket: encodes, frames and sends
/// messages; joins and decodes what arrives. A malformed message gets an error answer and
/// costs nobody else anything.
///
/// Its state lives on its channel's event loop (the frame handler's callbacks, `start`, and
/// the writer's report of each answer), in a box that checks so.
final class WebSocketTransport: Transport, Sendable {
    let channel: Channel
    /// Where malformed messages are reported (never with the message itself, which may
    /// carry a credential).
    private let log: @Sendable (String) -> Void
    /// Writes messages in batches; an answer written counts as answered.
    private let writer: FrameWriter
    private let loop: NIOLoopBoundBox<LoopState>

    private struct LoopState {
        var onMessage: (@Sendable (Message) -> Void)?
        var onClose: (@Sendable () -> Void)?
        var assembler = WireFraming.Assembler()
        var closed = false
        /// Messages that arrived before the session started (bytes sent right behind the
        /// upgrade request), delivered when it does.
        var early: [Message] = []
        var flow = FlowControl()
    }

    /// Requests read but not yet answered, by id (count and bytes): past `maxUnanswered` of
    /// either, reading stops until answers catch up, so a client that sends faster than the
    /// database can take it waits instead of filling the server.
    private struct FlowControl {
        var unanswered: [Int: (count: Int, bytes: Int)] = [:]
        var count = 0
        var bytes = 0
        var paused = false
        /// Set at shutdown: reading stays stopped, whatever the answers do.
        var stopped = false

        /// Counts a request read; true when reading must stop now.
        mutating func received(request id: Int, bytes size: Int) -> Bool {
            let entry = unanswered[id] ?? (0, 0)
            unanswered[id] = (entry.count + 1, entry.bytes + size)
            count += 1
            bytes += size
            guard !paused && (count > WebSocketTransport.maxUnansweredCount || bytes > WebSocketTransport.maxUnansweredBytes) else { return false }
            paused = true
            return true
        }

        /// Counts a request answered; true when reading may start again now.
        mutating func answered(_ id: Int) -> Bool {
            guard let entry = unanswered[id] else { return false }
            let size = entry.bytes / entry.count
            unanswered[id] = entry.count > 1 ? (entry.count - 1, entry.bytes - size) : nil
            count -= 1
            bytes -= size
            guard paused && !stopped && count <= WebSocketTransport.maxUnansweredCount / 2
                && bytes <= WebSocketTransport.maxUnansweredBytes / 2 else { return false }
            paused = false
            return true
        }
    }

    static let maxUnansweredCount = 20_000
    static let maxUnansweredBytes = 32 << 20

    /// `maxAnswerBytes`: the largest message sent (a client takes 256 MB; tests, less).
    init(channel: Channel, log: @escaping @Sendable (String) -> Void, maxAnswerBytes: Int = WireFraming.maxResponseBytes) {
        self.channel = channel
        self.log = log
        let loop = NIOLoopBoundBox.makeBoxSendingValue(LoopState(), eventLoop: channel.eventLoop)
        self.loop = loop
        writer = FrameWriter(channel: channel, masked: false, maxAnswerBytes: maxAnswerBytes) { message in
            guard case .response(let id, _) = message, loop.value.flow.answered(id) else { return }
            channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
            channel.read()
        }
    }

    func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
        loop.value.onMessage = onMessage
        loop.value.onClose = onClose
        let waiting = loop.value.early
        loop.value.early = []
        for message in waiting { onMessage(message) }
    }

    func send(_ message: Message) {
        writer.write(message)
    }

    func sendIfItFits(_ message: Message) -> Bool {
        writer.writeIfItFits(message)
    }

    func send(sharing encoding: SharedEncoding) {
        writer.write(sharing: encoding)
    }

    func close() {
        channel.close(promise: nil)
    }

    /// Stops reading for good (a server shutting down); the future completes once it has.
    func stopReading() -> EventLoopFuture<Void> {
        channel.eventLoop.submit { self.loop.value.flow.stopped = true }.flatMap {
            self.channel.setOption(ChannelOptions.autoRead, value: false)
        }
    }

    /// A text frame arrived (on the channel's event loop).
    func received(_ text: [UInt8]) {
        let started = StageClock.begin()
        defer { StageClock.end(.serverDecode, since: started) }
        let message: [UInt8]?
        do { message = try loop.value.assembler.receive(text) } catch {
            log("closing the connection from \(channel.remoteAddress?.description ?? "?"): \(error)")
            send(.serverError("\(error)"))
            WebSocketFrames.close(channel, code: .messageTooLarge, reason: "message too large")
            return
        }
        guard let message else { return }
        do {
            let decoded = try WireCodec.decode(message)
            if case .request(let id, _, _) = decoded, loop.value.flow.received(request: id, bytes: message.count) {
                channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
            }
            if let onMessage = loop.value.onMessage {
                onMessage(decoded)
            } else if !loop.value.closed {
                loop.value.early.append(decoded)
            }
        } catch let error as WireError {
            log("malformed message from \(channel.remoteAddress?.description ?? "?"): \(error.message)")
            if let id = error.requestID {
                // Answered here, never counted as waiting: written directly.
                writer.write(.response(id: id, .error(.invalidRequest, error.message)))
            } else {
                send(.serverError(error.message))
            }
        } catch {
            send(.serverError("\(error)"))
        }
    }

    func closedByPeer() {
        guard !loop.value.closed else { return }
        let onClose = loop.value.onClose
        // The session holds this transport and these closures hold the session: let go.
        loop.value = LoopState(closed: true)
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
