import Foundation
import NIOCore
import NIOHTTP1
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBRules

/// The REST API's connection side: reads a request (head and body, bounded), refuses what
/// the access policy forbids, hands the rest to `RESTRouter` off the event loop, and writes
/// its answer or starts its event stream.
final class HTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The largest REST body: Firebase's REST limit is 256 MB; this server keeps it lower so
    /// that reading a body (about 20 times its size in the worst case, an array of tiny
    /// numbers) stays far below this machine's memory.
    static let maxBody = 64 << 20

    let router: RESTRouter
    let policy: AccessPolicy
    /// Where refused requests are reported (credentials left out).
    private let log: @Sendable (String) -> Void
    /// Makes the handler that lets a later request on this connection become a WebSocket.
    private let makeUpgradeHandler: () -> (ChannelHandler & RemovableChannelHandler)?
    private var head: HTTPRequestHead?
    /// An array, not a buffer: the value read from it keeps it (see `JSONDocument`).
    private var body: [UInt8] = []
    private var tooLarge = false
    /// The request's `Content-Length`, 0 when it has none.
    private var declaredLength = 0

    init(namespaces: Namespaces, policy: AccessPolicy, identity: Identity = .anonymous, viewer: Bool = false,
         log: @escaping @Sendable (String) -> Void, makeUpgradeHandler: @escaping () -> (ChannelHandler & RemovableChannelHandler)? = { nil }) {
        self.router = RESTRouter(namespaces: namespaces, defaultIdentity: identity, viewer: viewer, log: log)
        self.policy = policy
        self.log = log
        self.makeUpgradeHandler = makeUpgradeHandler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = []
            declaredLength = h.headers.first(name: "Content-Length").flatMap(Int.init) ?? 0
            tooLarge = false
            context.triggerUserOutboundEvent(HTTPPhase.headReceived, promise: nil)
        case .body(let chunk):
            if tooLarge { return }
            if body.count + chunk.readableBytes > HTTPHandler.maxBody {
                tooLarge = true
                body = []  // nothing more is kept
            } else {
                // Room for the whole declared body at once, when an eighth of it is here:
                // grown by doubling, a body had up to twice its size allocated (and kept, by
                // the value read from it), and once both the old room and the new. Not from
                // the first byte: a peer that only announces a size would hold it reserved.
                let arrived = body.count + chunk.readableBytes
                if declaredLength > 0, declaredLength <= HTTPHandler.maxBody, arrived > body.capacity, arrived >= declaredLength / 8 {
                    body.reserveCapacity(max(declaredLength, arrived))
                }
                chunk.withUnsafeReadableBytes { body.append(contentsOf: $0) }
            }
        case .end:
            guard let head else { return }
            self.head = nil
            context.triggerUserOutboundEvent(HTTPPhase.requestComplete, promise: nil)
            handle(head, context: context)
        }
    }

    private var channel: Channel?

    func handlerAdded(context: ChannelHandlerContext) { channel = context.channel }

    /// CORS headers for a request from an allowed page: its own origin, never `*`.
    private static func cors(_ origin: String?) -> [(String, String)] {
        guard let origin else { return [] }
        return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
    }

    /// The viewer reads as the owner, so it is shown only to a page this server would take
    /// requests from: at a loopback address, or at an origin `--allow-origin` names.
    private func viewerRefusal(_ head: HTTPRequestHead) -> String? {
        guard router.viewer, let target = head.uri.split(separator: "?", maxSplits: 1).first,
              ViewerAssets.file(at: String(target)) != nil, let host = head.headers.first(name: "Host") else { return nil }
        guard policy.refusal(origin: "http://" + host) != nil, policy.refusal(origin: "https://" + host) != nil else { return nil }
        return "the data viewer reads as the owner, so it is shown at this machine's own addresses (127.0.0.1, localhost) or at an origin started with --allow-origin, not at \(HostName.name(ofHostHeader: host))"
    }

    private func handle(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let origin = head.headers.first(name: "Origin")
        let cors = policy.refusal(origin: origin) == nil ? Self.cors(origin) : []
        if let refusal = policy.refusal(host: head.headers.first(name: "Host")) ?? policy.refusal(origin: origin) {
            return answer(.reply(.error(.forbidden, refusal)), to: head, cors: cors)
        }
        if let refusal = viewerRefusal(head) {
            return answer(.reply(.error(.forbidden, refusal)), to: head, cors: cors)
        }
        if head.method == .OPTIONS {
            // A browser's preflight for a page this server allows.
            let requested = head.headers.first(name: "Access-Control-Request-Headers")
            return answer(.reply(RESTReply(status: .noContent, body: [], headers: [
                ("Access-Control-Allow-Methods", "GET, PUT, POST, PATCH, DELETE, OPTIONS"),
                ("Access-Control-Allow-Headers", requested ?? "Content-Type, Authorization, X-Firebase-ETag, If-Match, If-None-Match, X-HTTP-Method-Override, X-Rtdb-Guards"),
                ("Access-Control-Max-Age", "600"),
            ])), to: head, cors: cors)
        }
        if tooLarge {
            let message = "the request body is larger than \(HTTPHandler.maxBody >> 20) MiB, this server's limit; split the write"
            return answer(.reply(.error(.payloadTooLarge, message)), to: head, cors: cors)
        }
        // Opening a namespace reads its log and a body may be megabytes of JSON: neither
        // holds up the event loop's other connections. (The next request on this connection
        // is not read before this one is answered.)
        let body = self.body
        let router = self.router
        let loop = context.eventLoop
        let handler = NIOLoopBound(self, eventLoop: loop)
        let peer = PeerAddress.describe(context.channel.remoteAddress)
        HTTPHandler.work.async {
            router.route(head, body: body, peer: peer) { outcome in
                loop.execute { handler.value.answer(outcome, to: head, cors: cors) }
            }
        }
    }

    /// Sends a reply or starts an event stream, on the event loop.
    private func answer(_ outcome: RESTOutcome, to head: HTTPRequestHead, cors: [(String, String)]) {
        guard let channel else { return }
        switch outcome {
        case .reply(let reply):
            send(reply, to: head, cors: cors, on: channel)
        case let .stream(database, namespace, path, query, identity, export):
            channel.triggerUserOutboundEvent(HTTPPhase.longLived, promise: nil)
            let stream = EventStream(channel: channel, path: path, identity: identity, export: export)
            stream.start(version: head.version, headers: cors)
            database.stream(stream, path: path, query: query)
            let namespaces = router.namespaces
            channel.closeFuture.whenComplete { _ in
                stream.stop()
                database.detach(stream) { namespaces.release(namespace) }
            }
        case let .profile(database, namespace):
            channel.triggerUserOutboundEvent(HTTPPhase.longLived, promise: nil)
            let stream = ProfileStream(channel: channel)
            stream.start(database.operations, version: head.version, headers: cors)
            let namespaces = router.namespaces
            channel.closeFuture.whenComplete { _ in
                stream.stop()
                namespaces.release(namespace)
            }
        }
    }

    private func send(_ reply: RESTReply, to head: HTTPRequestHead, cors: [(String, String)], on channel: Channel) {
        let keepAlive = head.isKeepAlive
        if let problem = reply.problem {
            let peer = channel.remoteAddress?.description ?? "?"
            log("REST \(head.method.rawValue) \(RESTRouter.redacted(head.uri)) from \(peer): \(reply.status.code) \(problem)")
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: reply.contentType)
        headers.add(name: "Content-Length", value: String(reply.body.count))
        headers.add(name: "Cache-Control", value: "no-cache")
        for (name, value) in cors + reply.headers { headers.add(name: name, value: value) }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        // The next request on this connection may be a WebSocket upgrade (browsers and Node
        // reuse connections): be ready for it before this answer ends.
        if keepAlive, let upgrader = makeUpgradeHandler(),
           (try? channel.pipeline.syncOperations.context(handlerType: HTTPServerUpgradeHandler.self)) == nil {
            try? channel.pipeline.syncOperations.addHandler(upgrader, position: .before(self))
        }
        channel.write(HTTPServerResponsePart.head(HTTPResponseHead(version: head.version, status: reply.status, headers: headers)), promise: nil)
        channel.writeBody(reply.body)
        channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in
            if !keepAlive { channel.close(promise: nil) }
            channel.triggerUserOutboundEvent(HTTPPhase.responseSent, promise: nil)
        }
    }

    /// Where requests are read and routed, off the event loops.
    private static let work = DispatchQueue(label: "rtdb.rest", attributes: .concurrent)
}
