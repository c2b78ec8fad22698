import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBRules
import Synchronization

/// `rtdb serve`: the engine on a TCP port — the realtime protocol over WebSocket at
/// `/.ws?ns=NAME`, and the REST API at `/path.json` — one database per namespace.
public final class NetworkServer: Sendable {
    public let namespaces: Namespaces
    public let policy: AccessPolicy
    private let group: MultiThreadedEventLoopGroup
    /// The listening channel, once started.
    private let channel = Mutex<Channel?>(nil)
    private let connections = RealtimeConnections()
    private let log: @Sendable (String) -> Void
    /// How long a request may take to arrive (its head in all, its body between reads); a
    /// keep-alive connection may sit idle twice as long.
    public let requestTimeout: TimeAmount

    /// Whether `/` shows the data viewer (`ViewerAssets`).
    public let viewer: Bool

    public init(namespaces: Namespaces, policy: AccessPolicy = AccessPolicy(), threads: Int = System.coreCount,
                requestTimeout: TimeAmount = .seconds(30), viewer: Bool = false, log: @escaping @Sendable (String) -> Void) {
        self.namespaces = namespaces
        self.viewer = viewer
        self.requestTimeout = requestTimeout
        self.policy = policy
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        self.log = log
    }

    /// Binds and starts serving; returns the bound port. With `tls`, every connection is
    /// TLS (`wss://`, `https://`).
    public func start(host: String, port: Int, tls: NIOSSLContext? = nil) throws -> Int {
        let bootstrap = self.bootstrap(tls: tls, identity: .anonymous)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
        let channel = try bootstrap.bind(host: host, port: port).wait()
        self.channel.withLock { $0 = channel }
        return channel.localAddress?.port ?? port
    }

    /// Binds a Unix socket at `path` (which must not exist) and starts serving on it: an
    /// embedded database's owner serving the other processes on its folder. Only its user
    /// can reach the socket, so its clients are the database's owner.
    public func start(unixSocket path: String) throws {
        let channel = try bootstrap(tls: nil, identity: .admin).bind(unixDomainSocketPath: path).wait()
        self.channel.withLock { $0 = channel }
    }

    /// `identity`: who a client is until it sends a credential.
    private func bootstrap(tls: NIOSSLContext?, identity: Identity) -> ServerBootstrap {
        let log = self.log
        let upgrader = webSocketUpgrader(identity: identity)
        let namespaces = self.namespaces
        let policy = self.policy
        let viewer = self.viewer
        let limits = RequestDeadline.Limits(headTimeout: requestTimeout, bodyIdleTimeout: requestTimeout,
                                            bodyTimeout: .minutes(10), idleTimeout: requestTimeout * 2)
        return ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            // Out of descriptors, accepting pauses a moment instead of spinning on the error.
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(AcceptPause(log: log)) }
            }
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
                    try pipeline.addHandler(OutboundBudget(log: log))
                    try pipeline.addHandler(RequestDeadline(limits: limits))
                    let encoder = HTTPResponseEncoder()
                    let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes))
                    let pipelining = HTTPServerPipelineHandler()
                    let errors = HTTPServerProtocolErrorHandler()
                    try pipeline.addHandlers([encoder, decoder, pipelining, errors])
                    // A WebSocket upgrade may come as any request of a keep-alive connection,
                    // so the HTTP handler adds a fresh upgrade handler after each answer.
                    let makeUpgradeHandler = { () -> (ChannelHandler & RemovableChannelHandler)? in
                        HTTPServerUpgradeHandler(upgraders: [upgrader], httpEncoder: encoder, extraHTTPHandlers: [decoder, pipelining, errors],
                                                 upgradeCompletionHandler: { context in
                            let pipeline = context.pipeline.syncOperations
                            for handler in [try? pipeline.context(handlerType: HTTPHandler.self), try? pipeline.context(handlerType: RequestDeadline.self)] {
                                if let handler { pipeline.removeHandler(context: handler, promise: nil) }
                            }
                        })
                    }
                    if let upgrade = makeUpgradeHandler() { try pipeline.addHandler(upgrade) }
                    try pipeline.addHandler(HTTPHandler(namespaces: namespaces, policy: policy, identity: identity, viewer: viewer, log: log,
                                                        makeUpgradeHandler: makeUpgradeHandler))
                }
            }
    }

    /// Upgrades `GET /.ws` from an allowed host and page to the realtime protocol.
    private func webSocketUpgrader(identity: Identity) -> NIOWebSocketServerUpgrader {
        let namespaces = self.namespaces
        let policy = self.policy
        let viewer = self.viewer
        let log = self.log
        let connections = self.connections
        return NIOWebSocketServerUpgrader(
            maxFrameSize: WireFraming.maxMessageBytes,
            shouldUpgrade: { channel, head in
                let (path, _) = RESTRouter.split(head.uri)
                // A refused upgrade goes on as an HTTP request, which says why (403).
                let allowed = path == "/.ws" && policy.refusal(host: head.headers.first(name: "Host")) == nil
                    && policy.refusal(origin: head.headers.first(name: "Origin")) == nil
                return channel.eventLoop.makeSucceededFuture(allowed ? HTTPHeaders() : nil)
            },
            upgradePipelineHandler: { channel, head in
                let (_, items) = RESTRouter.split(head.uri)
                let namespace = items["ns"] ?? RESTRouter.namespace(fromHost: head.headers.first(name: "Host"))
                let transport = WebSocketTransport(channel: channel, log: log)
                let peer = channel.remoteAddress?.description ?? "?"
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        // Clients send "0" after 45 s of silence: two minutes of nothing is a dead peer.
                        IdleStateHandler(readTimeout: NetworkServer.idleTimeout),
                        CloseWhenIdle(),
                        NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16,
                                                    maxAccumulatedFrameSize: WireFraming.maxMessageBytes),
                        transport.frameHandler,
                    ])
                    // Opening the namespace reads its log: off the event loop, with nothing read
                    // from the client meanwhile.
                    try channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
                    let host = head.headers.first(name: "Host") ?? "127.0.0.1"
                    DispatchQueue.global().async {
                        do {
                            guard let database = try namespaces.acquire(namespace) else { return }
                            // Back on the event loop, where the transport's close is reported:
                            // a client gone meanwhile gets no session.
                            channel.eventLoop.execute {
                                // A server shutting down takes no new connection.
                                guard channel.isActive, connections.add(transport) else {
                                    channel.close(promise: nil)
                                    return namespaces.release(namespace)
                                }
                                database.accept(transport, host: host, identity: identity, peer: PeerAddress.describe(channel.remoteAddress))
                                log("connection from \(peer) to namespace \(namespace)")
                                channel.closeFuture.whenComplete { _ in
                                    namespaces.release(namespace)
                                    log("connection from \(peer) closed")
                                }
                                channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
                            }
                        } catch {
                            log("namespace \(namespace): \(error)")
                            transport.send(.serverError(Namespaces.clientMessage(for: error, namespace: namespace)))
                            channel.close(promise: nil)
                        }
                    }
                }
            })
    }

    /// A TLS context from a PEM certificate chain and its private key.
    public static func tlsContext(certificateFile: String, keyFile: String) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        return try NIOSSLContext(configuration: configuration)
    }

    /// How long a realtime connection may stay silent before it is closed (and its
    /// onDisconnect operations run).
    public static let idleTimeout = TimeAmount.seconds(120)

    /// Stops accepting and reading, answers every request read (each write once durable),
    /// closes connections after their answers, and closes the databases. A client loses no
    /// acknowledgement of a write the server applied.
    public func shutdown() {
        try? channel.withLock { $0 }?.close().wait()
        connections.stopReading()
        namespaces.settleAll()
        connections.closeAll(patience: 2)
        try? group.syncShutdownGracefully()
        namespaces.closeAll()
    }
}

/// Closes a connection that has been silent too long.
final class CloseWhenIdle: ChannelInboundHandler {
    typealias InboundIn = NIOAny
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
