import Foundation
import NIOCore
import NIOHTTP1
import RTDBData
import RTDBEngine
import RTDBProtocol

/// The REST API on the server's port: `/path.json` with GET, PUT, POST, PATCH and DELETE,
/// `print`, `shallow`, `format=export`, queries and ETags, errors as `{"error": …}`.
final class HTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The largest REST body: Firebase's REST limit is 256 MB; this server keeps it lower so
    /// that reading a body (about 20 times its size in the worst case, an array of tiny
    /// numbers) stays far below this machine's memory.
    static let maxBody = 64 << 20

    let namespaces: Namespaces
    let policy: AccessPolicy
    /// Where refused requests are reported (credentials left out).
    private let log: @Sendable (String) -> Void
    /// Makes the handler that lets a later request on this connection become a WebSocket.
    private let makeUpgradeHandler: () -> (ChannelHandler & RemovableChannelHandler)?
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    private var tooLarge = false

    init(namespaces: Namespaces, policy: AccessPolicy, log: @escaping @Sendable (String) -> Void,
         makeUpgradeHandler: @escaping () -> (ChannelHandler & RemovableChannelHandler)? = { nil }) {
        self.namespaces = namespaces
        self.policy = policy
        self.log = log
        self.makeUpgradeHandler = makeUpgradeHandler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = context.channel.allocator.buffer(capacity: 0)
            tooLarge = false
            context.triggerUserOutboundEvent(HTTPPhase.headReceived, promise: nil)
        case .body(var chunk):
            if tooLarge { return }
            if body.readableBytes + chunk.readableBytes > HTTPHandler.maxBody {
                tooLarge = true
                body = context.channel.allocator.buffer(capacity: 0)  // nothing more is kept
            } else {
                body.writeBuffer(&chunk)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            context.triggerUserOutboundEvent(HTTPPhase.requestComplete, promise: nil)
            handle(head, context: context)
        }
    }

    private struct Reply {
        var status: HTTPResponseStatus
        var body: [UInt8]
        var headers: [(String, String)] = []
        /// What went wrong, for the server's log.
        var problem: String?
    }

    private var channel: Channel?

    func handlerAdded(context: ChannelHandlerContext) { channel = context.channel }

    private func startStream(_ database: Database, namespace: String, _ path: Path, _ query: QueryParams?,
                             _ head: HTTPRequestHead, cors: [(String, String)]) {
        guard let channel else { return }
        channel.triggerUserOutboundEvent(HTTPPhase.longLived, promise: nil)
        let stream = EventStream(channel: channel, path: path)
        stream.start(version: head.version, headers: cors)
        database.stream(stream, path: path, query: query)
        let namespaces = self.namespaces
        channel.closeFuture.whenComplete { _ in
            stream.stop()
            database.detach(stream) { namespaces.release(namespace) }
        }
    }

    /// CORS headers for a request from an allowed page: its own origin, never `*`.
    private static func cors(_ origin: String?) -> [(String, String)] {
        guard let origin else { return [] }
        return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
    }

    private func handle(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let channel = context.channel
        let keepAlive = head.isKeepAlive
        let log = self.log
        let origin = head.headers.first(name: "Origin")
        let cors = policy.refusal(origin: origin) == nil ? Self.cors(origin) : []
        let upgradeAgain = keepAlive ? makeUpgradeHandler : { nil }
        let respond: (Reply) -> Void = { [weak self] reply in
            if let problem = reply.problem {
                let peer = channel.remoteAddress?.description ?? "?"
                log("REST \(head.method.rawValue) \(HTTPHandler.redacted(head.uri)) from \(peer): \(reply.status.code) \(problem)")
            }
            channel.eventLoop.execute {
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
                headers.add(name: "Content-Length", value: String(reply.body.count))
                headers.add(name: "Cache-Control", value: "no-cache")
                for (name, value) in cors + reply.headers { headers.add(name: name, value: value) }
                if !keepAlive { headers.add(name: "Connection", value: "close") }
                // The next request on this connection may be a WebSocket upgrade (browsers
                // and Node reuse connections): be ready for it before this answer ends.
                if let self, let upgrader = upgradeAgain(),
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
        }
        if let refusal = policy.refusal(host: head.headers.first(name: "Host")) ?? policy.refusal(origin: origin) {
            return respond(Reply(status: .forbidden, body: Self.errorBody(refusal), problem: refusal))
        }
        if head.method == .OPTIONS {
            // A browser's preflight for a page this server allows.
            let requested = head.headers.first(name: "Access-Control-Request-Headers")
            return respond(Reply(status: .noContent, body: [], headers: [
                ("Access-Control-Allow-Methods", "GET, PUT, POST, PATCH, DELETE, OPTIONS"),
                ("Access-Control-Allow-Headers", requested ?? "Content-Type, Authorization, X-Firebase-ETag, If-Match, If-None-Match, X-HTTP-Method-Override"),
                ("Access-Control-Max-Age", "600"),
            ]))
        }
        if tooLarge { return respond(Self.error(.payloadTooLarge, "the request body is larger than \(HTTPHandler.maxBody >> 20) MiB, this server's limit; split the write")) }
        // Opening a namespace reads its log and a body may be megabytes of JSON: neither
        // holds up the event loop's other connections. (The next request on this connection
        // is not read before this one is answered.)
        let body = self.body
        HTTPHandler.work.async {
            do {
                try self.route(head, body, respond)
            } catch let failure as RESTFailure {
                respond(Self.error(failure.status, failure.message))
            } catch {
                respond(Self.error(.internalServerError, "\(error)"))
            }
        }
    }

    /// Where requests are read and routed, off the event loops.
    private static let work = DispatchQueue(label: "rtdb.rest", attributes: .concurrent)

    struct RESTFailure: Error {
        let status: HTTPResponseStatus
        let message: String
    }

    private static func error(_ status: HTTPResponseStatus, _ message: String) -> Reply {
        Reply(status: status, body: errorBody(message), problem: message)
    }

    private static func errorBody(_ message: String) -> [UInt8] {
        Array(JSONValue.object([("error", .string(message))]).serialized().utf8)
    }

    /// The database path of a REST target's path part (`/users/ada.json`), percent-decoded
    /// and checked with the database's rules.
    static func path(fromTarget rawPath: String) throws -> Path {
        var segments: [String] = []
        for segment in Path.segments(String(rawPath.dropLast(".json".count))) {
            guard let key = segment.removingPercentEncoding else {
                throw RESTFailure(status: .badRequest, message: "Invalid path: a percent-encoded segment is not valid UTF-8")
            }
            segments.append(key)
        }
        let path = Path(keys: segments)
        do { try path.validate() } catch { throw RESTFailure(status: .badRequest, message: "Invalid path: \(error)") }
        return path
    }

    /// Writes always open (and create) their namespace.
    private static func opened(_ database: Database?) throws -> Database {
        guard let database else { throw RESTFailure(status: .internalServerError, message: "the namespace is not open") }
        return database
    }

    private static func etag(_ node: Node) -> String { node.isEmpty ? "null_etag" : node.hashString }

    private func route(_ head: HTTPRequestHead, _ body: ByteBuffer, _ respond: @escaping (Reply) -> Void) throws {
        let (rawPath, items) = Self.split(head.uri)
        if rawPath == "/.ws" {
            throw RESTFailure(status: .badRequest, message: "/.ws is the realtime protocol: connect with a WebSocket upgrade")
        }
        guard rawPath.hasSuffix(".json") else {
            throw RESTFailure(status: .notFound, message: "not found: REST paths end in .json, as in /users/ada.json; WebSocket clients connect to /.ws")
        }
        let path = try Self.path(fromTarget: rawPath)
        let namespace = items["ns"] ?? Self.namespace(fromHost: head.headers.first(name: "Host"))
        var method = head.method.rawValue
        if method == "POST", let override = head.headers.first(name: "X-HTTP-Method-Override") ?? items["x-http-method-override"] {
            method = override.uppercased()
        }
        let streaming = method == "GET" && head.headers.first(name: "Accept")?.contains("text/event-stream") == true
        let acquired: Database?
        do {
            // A plain read of a namespace that does not exist opens and creates nothing.
            acquired = try namespaces.acquire(namespace, create: method != "GET" || streaming)
        } catch {
            // The full reason (with the server's file names) is for the server's log only.
            log("namespace \(namespace): \(error)")
            throw RESTFailure(status: .notFound, message: Namespaces.clientMessage(for: error, namespace: namespace))
        }
        let namespaces = self.namespaces
        var released = false
        let release = {
            if !released, acquired != nil { released = true; namespaces.release(namespace) }
        }
        do {
            try route(method, head, items, path, body, namespace: namespace, acquired, streaming: streaming) { reply in
                release()
                respond(reply)
            }
        } catch {
            release()
            throw error
        }
    }

    private func route(_ method: String, _ head: HTTPRequestHead, _ items: [String: String], _ path: Path, _ body: ByteBuffer,
                       namespace: String, _ database: Database?, streaming: Bool, _ respond: @escaping (Reply) -> Void) throws {
        let print = items["print"]
        let pretty = print == "pretty"
        let silent = print == "silent"
        let export = items["format"] == "export"
        let render: (Node) -> [UInt8] = { JSONWriter.bytes($0, options: .init(export: export, pretty: pretty)) }
        if method != "GET" && method != "DELETE" && path.isInfo {
            throw RESTFailure(status: .badRequest, message: "Invalid path: /.info is read-only")
        }
        switch method {
        case "GET":
            if items["shallow"] == "true" {
                if items.keys.contains(where: RESTQuery.parameters.contains) {
                    throw RESTFailure(status: .badRequest, message: "shallow cannot be combined with queries")
                }
            }
            let query: QueryParams?
            do { query = try RESTQuery.params(items) } catch let f as RESTQuery.Failure { throw RESTFailure(status: .badRequest, message: f.message) }
            if streaming, let database {
                return startStream(database, namespace: namespace, path, query, head, cors: Self.cors(head.headers.first(name: "Origin")))
            }
            let wantsETag = head.headers.first(name: "X-Firebase-ETag") == "true"
            let ifNoneMatch = head.headers.first(name: "if-none-match")
            // A namespace with no folder holds nothing.
            let read: (@escaping @Sendable (Node) -> Void) -> Void = { done in
                if let database { database.read(path, query: query, completion: done) } else { done(.empty) }
            }
            read { node in
                let value = items["shallow"] == "true" ? node.shallow : node
                var headers: [(String, String)] = []
                if wantsETag || ifNoneMatch != nil { headers.append(("ETag", Self.etag(node))) }
                if let ifNoneMatch, ifNoneMatch == Self.etag(node) {
                    return respond(Reply(status: .notModified, body: [], headers: headers))
                }
                respond(Reply(status: .ok, body: silent ? [] : render(value), headers: headers))
            }
        case "PUT", "DELETE":
            let database = try Self.opened(database)
            var value = Node.empty
            if method == "PUT" {
                do { value = try Self.parse(body) { try JSONReader.parse(bytes: $0, options: .init(base: path)) } } catch {
                    throw RESTFailure(status: .badRequest, message: "Invalid data; couldn't parse JSON object, array, or value: \(error)")
                }
            }
            let ifMatch = head.headers.first(name: "if-match")
            let hash = ifMatch.map { $0 == "null_etag" ? "" : $0 }
            database.submit(.put(path: path, data: value, hash: hash)) { response in
                if response.status == "datastale" {
                    return database.read(path, query: nil) { current in
                        respond(Reply(status: .preconditionFailed, body: render(current), headers: [("ETag", Self.etag(current))]))
                    }
                }
                guard response.isOK else { return respond(Self.error(response.status == "write_failed" ? .internalServerError : .badRequest, response.message)) }
                database.read(path, query: nil) { written in
                    var headers: [(String, String)] = []
                    if ifMatch != nil { headers.append(("ETag", Self.etag(written))) }
                    if silent { return respond(Reply(status: .noContent, body: [], headers: headers)) }
                    respond(Reply(status: .ok, body: method == "DELETE" ? Array("null".utf8) : render(written), headers: headers))
                }
            }
        case "POST":
            let database = try Self.opened(database)
            let value: Node
            do { value = try Self.parse(body) { try JSONReader.parse(bytes: $0, options: .init(base: path.child("-AAAAAAAAAAAAAAAAAAA"))) } } catch {
                throw RESTFailure(status: .badRequest, message: "Invalid data; couldn't parse JSON object, array, or value: \(error)")
            }
            database.push(path, value) { key, response in
                guard response.isOK else { return respond(Self.error(.badRequest, response.message)) }
                if silent { return respond(Reply(status: .noContent, body: [])) }
                respond(Reply(status: .ok, body: Array(JSONValue.object([("name", .string(key))]).serialized().utf8)))
            }
        case "PATCH":
            let database = try Self.opened(database)
            let entries: [(Path, Node)]
            do {
                entries = try Self.parse(body) { try JSONReader.parseUpdate(bytes: $0, base: path) }
                try validateUpdatePaths(entries, base: path)
            } catch {
                throw RESTFailure(status: .badRequest, message: "Invalid data; couldn't parse JSON object: \(error)")
            }
            database.submit(.merge(path: path, data: entries.map { Update($0.0, $0.1) })) { response in
                guard response.isOK else { return respond(Self.error(.badRequest, response.message)) }
                if silent { return respond(Reply(status: .noContent, body: [])) }
                var patch = Node.empty
                for (relative, value) in entries { patch = patch.setting(relative, to: value) }
                respond(Reply(status: .ok, body: render(patch)))
            }
        default:
            throw RESTFailure(status: .methodNotAllowed, message: "method \(method) is not supported: use GET, PUT, POST, PATCH or DELETE")
        }
    }

    /// Reads a request body in place, without a copy. Bytes that are not UTF-8 are refused: the
    /// reader checks every string, and outside strings JSON allows ASCII only.
    private static func parse<T>(_ body: ByteBuffer, _ read: (UnsafeBufferPointer<UInt8>) throws -> T) throws -> T {
        try body.withUnsafeReadableBytes { try read($0.bindMemory(to: UInt8.self)) }
    }

    /// The request target with credential parameters (`auth`, `access_token`) blanked, for logs.
    static func redacted(_ uri: String) -> String {
        guard let question = uri.firstIndex(of: "?") else { return uri }
        let items = uri[uri.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            let name = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return ["auth", "access_token"].contains(name) ? name + "=REDACTED" : String(item)
        }
        return String(uri[..<question]) + "?" + items.joined(separator: "&")
    }

    /// The path and the query parameters of a request target. Empty names (`?=x`) are kept as
    /// they are (no known parameter is empty); a name or value whose percent-encoding is not
    /// valid UTF-8 is kept undecoded, and is then simply not a known parameter.
    static func split(_ uri: String) -> (String, [String: String]) {
        guard let q = uri.firstIndex(of: "?") else { return (uri, [:]) }
        var items: [String: String] = [:]
        for pair in uri[uri.index(after: q)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                .map { String($0).replacingOccurrences(of: "+", with: " ") }
            guard let first = parts.first else { continue }
            let name = first.removingPercentEncoding ?? first
            let value = parts.count > 1 ? parts[1] : ""
            items[name] = value.removingPercentEncoding ?? value
        }
        return (String(uri[..<q]), items)
    }

    /// The namespace a `Host` header names (`demo.localhost:9000` → demo), as clients read it.
    static func namespace(fromHost header: String?) -> String {
        header.map { HostName.namespace(of: HostName.name(ofHostHeader: $0)) } ?? "default"
    }
}
