import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import RTDBData
import RTDBProtocol

/// `rtdb serve`: the engine on a TCP port — the realtime protocol over WebSocket at
/// `/.ws?ns=NAME`, and the REST API at `/path.json` — one database per namespace.
public final class NetworkServer: @unchecked Sendable {
    public let namespaces: Namespaces
    private let group: MultiThreadedEventLoopGroup
    private var channel: Channel?
    private let log: @Sendable (String) -> Void

    public init(namespaces: Namespaces, threads: Int = System.coreCount, log: @escaping @Sendable (String) -> Void) {
        self.namespaces = namespaces
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        self.log = log
    }

    /// Binds and starts serving; returns the bound port. With `tls`, every connection is
    /// TLS (`wss://`, `https://`).
    public func start(host: String, port: Int, tls: NIOSSLContext? = nil) throws -> Int {
        let namespaces = self.namespaces
        let log = self.log
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                if let tls {
                    do {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    } catch {
                        return channel.eventLoop.makeFailedFuture(error)
                    }
                }
                let http = HTTPHandler(namespaces: namespaces, log: log)
                let upgrader = NIOWebSocketServerUpgrader(
                    maxFrameSize: WireFraming.maxMessageBytes,
                    shouldUpgrade: { channel, head in
                        let (path, _) = HTTPHandler.split(head.uri)
                        return channel.eventLoop.makeSucceededFuture(path == "/.ws" ? HTTPHeaders() : nil)
                    },
                    upgradePipelineHandler: { channel, head in
                        let (_, items) = HTTPHandler.split(head.uri)
                        let namespace = items["ns"] ?? HTTPHandler.namespace(fromHost: head.headers.first(name: "Host"))
                        let transport = WebSocketTransport(channel: channel, log: log)
                        let handler = transport.frameHandler
                        let peer = channel.remoteAddress?.description ?? "?"
                        return channel.pipeline.addHandlers([
                            // Clients send "0" after 45 s of silence: two minutes of nothing is a dead peer.
                            IdleStateHandler(readTimeout: NetworkServer.idleTimeout),
                            CloseWhenIdle(),
                            NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16,
                                                        maxAccumulatedFrameSize: WireFraming.maxMessageBytes),
                            handler,
                        ]).map {
                            do {
                                let database = try namespaces.database(namespace)
                                database.accept(transport, host: head.headers.first(name: "Host") ?? "127.0.0.1")
                                log("connection from \(peer) to namespace \(namespace)")
                                channel.closeFuture.whenComplete { _ in log("connection from \(peer) closed") }
                            } catch {
                                log("namespace \(namespace): \(error)")
                                transport.send(.serverError(Namespaces.clientMessage(for: error, namespace: namespace)))
                                channel.close(promise: nil)
                            }
                        }
                    })
                let upgrade: NIOHTTPServerUpgradeConfiguration = (upgraders: [upgrader], completionHandler: { context in
                    context.pipeline.removeHandler(http, promise: nil)
                })
                return channel.pipeline.configureHTTPServerPipeline(withServerUpgrade: upgrade).flatMap {
                    channel.pipeline.addHandler(http)
                }
            }
        let channel = try bootstrap.bind(host: host, port: port).wait()
        self.channel = channel
        return channel.localAddress?.port ?? port
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

    /// Stops accepting, closes connections, makes every write durable.
    public func shutdown() {
        try? channel?.close().wait()
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
