import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import RTDBData
import RTDBProtocol
import Synchronization

/// A client's realtime connection over a WebSocket (`ws://`). Messages sent before the
/// socket is open wait in order; each is encoded, split into frames and masked.
public final class WebSocketClientTransport: Transport, Sendable {
    public let address: ServerAddress
    private let lastSessionID: String?
    private let tls: NIOSSLContext?
    private let group: EventLoopGroup
    private struct State {
        var channel: Channel?
        /// Writes this connection's messages in batches (made with the channel).
        var writer: FrameWriter?
        var waiting: [Message] = []
        var onMessage: (@Sendable (Message) -> Void)?
        var onClose: (@Sendable () -> Void)?
        var closed = false
        var failure: String?
        /// When anything last crossed the socket; after 45 s of silence a "0" frame keeps it open.
        var lastActivity = NIODeadline.now()
        var keepAlive: RepeatedTask?
    }
    private let state = Mutex(State())
    /// Joins the frames of a long message; apart from `state`, as it is used only by the
    /// channel's reads.
    private let assembler = Mutex(WireFraming.Assembler(maxBytes: WireFraming.maxResponseBytes))
    public static let keepAliveInterval = TimeAmount.seconds(45)

    /// `tls` is required for a secure address (`wss://`).
    public init(address: ServerAddress, lastSessionID: String? = nil, tls: NIOSSLContext? = nil, group: EventLoopGroup) {
        self.address = address
        self.lastSessionID = lastSessionID
        self.tls = tls
        self.group = group
    }

    public func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.onMessage = onMessage
            state.onClose = onClose
        }
        if address.secure && tls == nil {
            record("a wss:// connection needs TLS settings")
            return finish()
        }
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let address = self.address
        let bootstrap = ClientBootstrap(group: group)
            .channelInitializer { [self] channel in
                // Everything here runs on the channel's event loop, so the pipeline is changed
                // with its synchronous operations.
                let upgrader = NIOWebSocketClientUpgrader(requestKey: key, maxFrameSize: 1 << 24, automaticErrorHandling: true) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16,
                                                        maxAccumulatedFrameSize: WireFraming.maxResponseBytes),
                            RealtimeFrameHandler(masked: true, onText: { self.received($0) }, onClosed: { self.finish() }),
                        ])
                        self.opened(channel)
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls = self.tls {
                        try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: ClientTLS.serverName(for: address.host)))
                    }
                    let request = UpgradeRequest(host: address.hostHeader, path: address.webSocketPath(lastSessionID: lastSessionID),
                                                 onFailure: { [weak self] in self?.record($0) })
                    let boundRequest = NIOLoopBound(request, eventLoop: channel.eventLoop)
                    // Once upgraded, frames must not reach the HTTP request handler.
                    let config: NIOHTTPClientUpgradeConfiguration = (upgraders: [upgrader], completionHandler: { context in
                        context.pipeline.syncOperations.removeHandler(boundRequest.value, promise: nil)
                    })
                    // The server's hello can arrive in the same read as the 101 answer: keep those bytes.
                    try pipeline.addHTTPClientHandlers(leftOverBytesStrategy: .forwardBytes, withClientUpgrade: config)
                    try pipeline.addHandler(request)
                }
            }
        // Small messages go at once (a Unix socket has no such option).
        if address.socketPath == nil { _ = bootstrap.channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1) }
        let connecting = address.socketPath.map { bootstrap.connect(unixDomainSocketPath: $0) } ?? bootstrap.connect(host: address.host, port: address.port)
        connecting.whenComplete { [self] result in
            switch result {
            case .success(let channel): channel.closeFuture.whenComplete { _ in self.finish() }
            case .failure(let error):
                record(error)
                finish()
            }
        }
    }

    private func opened(_ channel: Channel) {
        let pending: [Message] = state.withLock { state in
            state.channel = channel
            state.lastActivity = .now()
            state.keepAlive = channel.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(5), delay: .seconds(5)) { [weak self] _ in
                self?.keepAliveIfQuiet(channel)
            }
            defer { state.waiting = [] }
            return state.waiting
        }
        for message in pending { write(message, on: channel) }
    }

    public func send(_ message: Message) {
        let channel: Channel? = state.withLock { state in
            if state.channel == nil && !state.closed { state.waiting.append(message) }
            return state.channel
        }
        if let channel { write(message, on: channel) }
    }

    private func write(_ message: Message, on channel: Channel) {
        let writer: FrameWriter = state.withLock { state in
            state.lastActivity = .now()
            if let writer = state.writer { return writer }
            let writer = FrameWriter(channel: channel, masked: true)
            state.writer = writer
            return writer
        }
        writer.write(message)
    }

    private func touch() {
        state.withLock { $0.lastActivity = .now() }
    }

    private func keepAliveIfQuiet(_ channel: Channel) {
        let quiet = state.withLock { state in
            let quiet = NIODeadline.now() - state.lastActivity >= Self.keepAliveInterval
            if quiet { state.lastActivity = .now() }
            return quiet
        }
        guard quiet else { return }
        var buffer = channel.allocator.buffer(capacity: 1)
        buffer.writeString("0")
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer), promise: nil)
    }

    public func close() {
        if let channel = state.withLock({ $0.channel }) { channel.close(promise: nil) } else { finish() }
    }

    private func received(_ text: [UInt8]) {
        let started = StageClock.begin()
        defer { StageClock.end(.clientDecode, since: started) }
        touch()
        let message: [UInt8]?
        do { message = try assembler.withLock { try $0.receive(text) } } catch {
            record("the server sent a message this client cannot take: \(error)")
            close()
            return
        }
        guard let message, let decoded = try? WireCodec.decode(message) else { return }
        state.withLock { $0.onMessage }?(decoded)
    }

    /// Why the connection failed or ended, when it was an error (refused, TLS, upgrade).
    public var failureDescription: String? {
        state.withLock { $0.failure }
    }

    fileprivate func record(_ error: Error) { record(TransportFailure.describe(error)) }

    /// Keeps the first reason: later ones are consequences of it.
    fileprivate func record(_ text: String) {
        state.withLock { state in
            if state.failure == nil { state.failure = text }
        }
    }

    private func finish() {
        let handler: (@Sendable () -> Void)? = state.withLock { state in
            guard !state.closed else { return nil }
            state.closed = true
            state.keepAlive?.cancel()
            state.waiting = []
            return state.onClose
        }
        handler?()
    }
}

/// Sends the HTTP request that asks for the WebSocket upgrade.
private final class UpgradeRequest: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart
    let host: String
    let path: String
    let onFailure: (String) -> Void

    init(host: String, path: String, onFailure: @escaping (String) -> Void) {
        self.host = host
        self.path = path
        self.onFailure = onFailure
    }

    func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        headers.add(name: "Content-Length", value: "0")
        headers.add(name: "User-Agent", value: "rtdb")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // An answer other than 101 means the upgrade was refused; parts of the 101 itself
        // can pass here before this handler is removed, and must not end the connection.
        if case .head(let head) = unwrapInboundIn(data), head.status != .switchingProtocols {
            onFailure("the server answered HTTP \(head.status.code) instead of opening a WebSocket")
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        onFailure(TransportFailure.describe(error))
        context.close(promise: nil)
    }
}

/// Connection errors in words a user can act on.
enum TransportFailure {
    static func describe(_ error: Error) -> String {
        if let tls = error as? NIOSSLError {
            switch tls {
            case .handshakeFailed(let reason):
                let text = "\(reason)"
                if text.contains("CERTIFICATE_VERIFY_FAILED") {
                    return "the server's TLS certificate is not trusted (give its certificate with --cacert FILE)"
                }
                return "the TLS handshake failed (\(text))"
            default:
                return "TLS error: \(tls)"
            }
        }
        if let ssl = error as? NIOSSLExtraError { return "TLS error: \(ssl)" }
        if let connect = error as? NIOConnectionError {
            if connect.connectionErrors.isEmpty && (connect.dnsAError != nil || connect.dnsAAAAError != nil) {
                return "the host name \(connect.host) could not be resolved"
            }
            if let first = connect.connectionErrors.first { return describe(first.error) }
        }
        if let io = error as? IOError {
            return io.errnoCode == ECONNREFUSED ? "connection refused: is a server listening there?" : io.description
        }
        return "\(error)"
    }
}
