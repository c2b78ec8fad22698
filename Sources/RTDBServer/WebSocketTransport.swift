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
/// `@unchecked Sendable`: its state is touched only on its channel's event loop (the
/// frame handler's callbacks and `send`, which hops there).
final class WebSocketTransport: Transport, @unchecked Sendable {
    let channel: Channel
    private var onMessage: (@Sendable (Message) -> Void)?
    private var onClose: (@Sendable () -> Void)?
    private var assembler = WireFraming.Assembler()
    private var closed = false
    /// Where malformed messages are reported (never with the message itself, which may
    /// carry a credential).
    private let log: @Sendable (String) -> Void
    /// Writes messages in batches; an answer written counts as answered.
    private var writer: FrameWriter!

    /// `maxAnswerBytes`: the largest message sent (a client takes 256 MB; tests, less).
    init(channel: Channel, log: @escaping @Sendable (String) -> Void, maxAnswerBytes: Int = WireFraming.maxResponseBytes) {
        self.channel = channel
        self.log = log
        writer = FrameWriter(channel: channel, masked: false, maxAnswerBytes: maxAnswerBytes) { [weak self] message in
            if case .response(let id, _) = message { self?.answered(id) }
        }
    }

    /// Messages that arrived before the session started (bytes sent right behind the
    /// upgrade request), delivered when it does. Both happen on the event loop.
    private var early: [Message] = []

    func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
        self.onMessage = onMessage
        self.onClose = onClose
        let waiting = early
        early = []
        for message in waiting { onMessage(message) }
    }

    /// Requests read but not yet answered, by id (count and bytes), kept on the event loop:
    /// past `maxUnanswered` of either, reading stops until answers catch up, so a client that
    /// sends faster than the database can take it waits instead of filling the server.
    private var unanswered: [Int: (count: Int, bytes: Int)] = [:]
    private var unansweredCount = 0
    private var unansweredBytes = 0
    private var paused = false
    /// Set at shutdown: reading stays stopped, whatever the answers do.
    private var stopped = false
    static let maxUnansweredCount = 20_000
    static let maxUnansweredBytes = 32 << 20

    func send(_ message: Message) {
        writer.write(message)
    }

    func sendIfItFits(_ message: Message) -> Bool {
        writer.writeIfItFits(message)
    }

    func send(sharing encoding: SharedEncoding) {
        writer.write(sharing: encoding)
    }

    private func received(request id: Int, bytes: Int) {
        let entry = unanswered[id] ?? (0, 0)
        unanswered[id] = (entry.count + 1, entry.bytes + bytes)
        unansweredCount += 1
        unansweredBytes += bytes
        if !paused && (unansweredCount > Self.maxUnansweredCount || unansweredBytes > Self.maxUnansweredBytes) {
            paused = true
            channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
        }
    }

    private func answered(_ id: Int) {
        guard let entry = unanswered[id] else { return }
        let bytes = entry.bytes / entry.count
        unanswered[id] = entry.count > 1 ? (entry.count - 1, entry.bytes - bytes) : nil
        unansweredCount -= 1
        unansweredBytes -= bytes
        if paused && !stopped && unansweredCount <= Self.maxUnansweredCount / 2 && unansweredBytes <= Self.maxUnansweredBytes / 2 {
            paused = false
            channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
            channel.read()
        }
    }

    func close() {
        channel.close(promise: nil)
    }

    /// Stops reading for good (a server shutting down); the future completes once it has.
    func stopReading() -> EventLoopFuture<Void> {
        channel.eventLoop.submit { self.stopped = true }.flatMap {
            self.channel.setOption(ChannelOptions.autoRead, value: false)
        }
    }

    /// A text frame arrived (on the channel's event loop).
    func received(_ text: [UInt8]) {
        let started = StageClock.begin()
        defer { StageClock.end(.serverDecode, since: started) }
        let message: [UInt8]?
        do { message = try assembler.receive(text) } catch {
            log("closing the connection from \(channel.remoteAddress?.description ?? "?"): \(error)")
            send(.serverError("\(error)"))
            WebSocketFrames.close(channel, code: .messageTooLarge, reason: "message too large")
            return
        }
        guard let message else { return }
        do {
            let decoded = try WireCodec.decode(message)
            if case .request(let id, _, _) = decoded { received(request: id, bytes: message.count) }
            if let onMessage { onMessage(decoded) } else if !closed { early.append(decoded) }
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
        guard !closed else { return }
        closed = true
        let onClose = self.onClose
        // The session holds this transport and these closures hold the session: let go.
        self.onMessage = nil
        self.onClose = nil
        unanswered = [:]
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
