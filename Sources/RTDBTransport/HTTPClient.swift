import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import RTDBProtocol

/// One HTTP/1.1 request and its whole answer, over TCP or TLS: the REST calls a client makes
/// beside its realtime connection (a database's security rules, a service account's token).
public enum HTTPClient {
    public struct Answer: Sendable {
        public let status: Int
        public let body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Answers larger than this are refused (a rules file or a token is far smaller).
    public static let maxAnswerBytes = 16 << 20

    /// `target` is the path and query (`/.settings/rules.json?ns=demo`); `tls` is required for
    /// https. With `unixSocket`, the request goes to that socket (an embedded database's
    /// owner) rather than to `host` and `port`, which then only name it in the `Host` header.
    /// Throws `WireError` when the server cannot be reached or does not answer in time.
    public static func send(_ method: String, host: String, port: Int, unixSocket: String? = nil, target: String,
                            headers: [(String, String)] = [], body: [UInt8] = [], tls: NIOSSLContext?, group: EventLoopGroup,
                            timeout: TimeInterval) async throws -> Answer {
        let name = unixSocket ?? "\(host):\(port)"
        let promise = group.next().makePromise(of: Answer.self)
        let channel: Channel
        do {
            channel = try await connect(host: host, port: port, unixSocket: unixSocket, tls: tls, group: group, timeout: timeout) {
                Collector(promise: promise)
            }
        } catch {
            promise.fail(error)
            throw error
        }
        let deadline = channel.eventLoop.scheduleTask(in: .milliseconds(Int64(timeout * 1000))) {
            promise.fail(WireError("\(name) did not answer within \(Int(timeout)) seconds"))
            channel.close(promise: nil)
        }
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: target)
        head.headers.add(name: "Host", value: port == (tls == nil ? 80 : 443) ? host : "\(host):\(port)")
        head.headers.add(name: "Content-Length", value: String(body.count))
        head.headers.add(name: "Connection", value: "close")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if !body.isEmpty { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        defer {
            deadline.cancel()
            channel.close(promise: nil)
        }
        return try await promise.futureResult.get()
    }

    /// A connection to `host` (or `unixSocket`) for HTTP: TLS when given, the HTTP client's
    /// handlers, then the handler `reader` makes for the answer. Throws `WireError` when the
    /// server cannot be reached within `timeout`.
    static func connect(host: String, port: Int, unixSocket: String?, tls: NIOSSLContext?, group: EventLoopGroup, timeout: TimeInterval,
                        reader: @escaping @Sendable () -> any ChannelHandler) async throws -> Channel {
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.milliseconds(Int64(timeout * 1000)))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls {
                        try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: ClientTLS.serverName(for: host)))
                    }
                    try pipeline.addHTTPClientHandlers()
                    try pipeline.addHandler(reader())
                }
            }
        do {
            return try await (unixSocket.map { bootstrap.connect(unixDomainSocketPath: $0) } ?? bootstrap.connect(host: host, port: port)).get()
        } catch {
            throw WireError("cannot reach \(unixSocket ?? "\(host):\(port)"): \(error)")
        }
    }

    /// Gathers the answer; the connection closing first is an error.
    /// Lives on its channel's event loop, as every NIO handler does.
    fileprivate final class Collector: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        private let promise: EventLoopPromise<Answer>
        private var status = 0
        private var body: [UInt8] = []
        private var done = false

        init(promise: EventLoopPromise<Answer>) { self.promise = promise }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !done else { return }
            switch unwrapInboundIn(data) {
            case .head(let head):
                status = Int(head.status.code)
            case .body(let buffer):
                guard body.count + buffer.readableBytes <= HTTPClient.maxAnswerBytes else {
                    return finish(.failure(WireError("the answer is larger than \(HTTPClient.maxAnswerBytes >> 20) MiB")), context)
                }
                body.append(contentsOf: buffer.readableBytesView)
            case .end:
                finish(.success(Answer(status: status, body: body)), context)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            finish(.failure(WireError("the connection closed before the answer was complete")), context)
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            finish(.failure(WireError("\(error)")), context)
        }

        private func finish(_ result: Result<Answer, Error>, _ context: ChannelHandlerContext) {
            guard !done else { return }
            done = true
            promise.completeWith(result)
            context.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension HTTPClient.Collector: Sendable {}
