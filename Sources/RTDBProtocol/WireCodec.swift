import RTDBData

/// A message that could not be read: what was wrong, and the request number when known so
/// the answer can go to that request.
public struct WireError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var requestID: Int?
    public init(_ message: String, requestID: Int? = nil) {
        self.message = message
        self.requestID = requestID
    }
    public var description: String { message }
}

/// The realtime protocol's JSON form of every message, both directions.
///
/// Data travels in export form (priorities kept). Paths go out as the official server sends
/// them (no leading slash) and are read in any form. Data a client sends is checked with the
/// database's rules against the path it is written to.
public enum WireCodec {
    // MARK: Encoding

    public static func encode(_ message: Message) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        switch message {
        case .handshake(let h):
            append(&out, #"{"t":"c","d":{"t":"h","d":{"ts":\#(h.timestamp),"v":"#)
            JSONWriter.writeString(h.version, to: &out)
            append(&out, #","h":"#)
            JSONWriter.writeString(h.host, to: &out)
            append(&out, #","s":"#)
            JSONWriter.writeString(h.sessionID, to: &out)
            append(&out, "}}}")
        case .ping: append(&out, #"{"t":"c","d":{"t":"p","d":{}}}"#)
        case .pong: append(&out, #"{"t":"c","d":{"t":"o","d":{}}}"#)
        case .reset(let host): control(&out, "r", host)
        case .shutdown(let reason): control(&out, "s", reason)
        case .serverError(let text): control(&out, "e", text)
        case let .request(id, request):
            append(&out, #"{"t":"d","d":{"r":\#(id),"a":"\#(request.action)","b":"#)
            body(request, &out)
            append(&out, "}}")
        case let .response(id, response):
            append(&out, #"{"t":"d","d":{"r":\#(id),"b":{"s":"#)
            JSONWriter.writeString(response.status, to: &out)
            append(&out, #","d":"#)
            if response.isOK, response.data.isEmpty {
                append(&out, #""""#)
            } else {
                JSONWriter.write(response.data, to: &out, options: .init(export: true))
            }
            append(&out, "}}}")
        case .push(let push):
            append(&out, #"{"t":"d","d":{"a":"#)
            switch push {
            case let .data(path, data, tag):
                append(&out, #""d","b":{"p":"#)
                JSONWriter.writeString(path.wireString, to: &out)
                append(&out, #","d":"#)
                JSONWriter.write(data, to: &out, options: .init(export: true))
                if let tag { append(&out, #","t":\#(tag)"#) }
            case let .merge(path, updates, tag):
                append(&out, #""m","b":{"p":"#)
                JSONWriter.writeString(path.wireString, to: &out)
                append(&out, #","d":"#)
                updatesObject(updates, &out)
                if let tag { append(&out, #","t":\#(tag)"#) }
            case let .listenRevoked(path, query):
                append(&out, #""c","b":{"p":"#)
                JSONWriter.writeString(path.wireString, to: &out)
                // The JS client maps over q: a one-element array.
                if let query { append(&out, #","q":["#); query.wireObject.write(to: &out); append(&out, "]") }
            case let .authRevoked(status, reason):
                append(&out, #""ac","b":{"s":"#)
                JSONWriter.writeString(status, to: &out)
                append(&out, #","d":"#)
                JSONWriter.writeString(reason, to: &out)
            }
            append(&out, "}}}")
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func append(_ out: inout [UInt8], _ text: String) { out.append(contentsOf: text.utf8) }

    private static func control(_ out: inout [UInt8], _ type: String, _ text: String) {
        append(&out, #"{"t":"c","d":{"t":"\#(type)","d":"#)
        JSONWriter.writeString(text, to: &out)
        append(&out, "}}")
    }

    private static func updatesObject(_ updates: [Update], _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (i, update) in updates.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(update.path.wireString, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(update.value, to: &out, options: .init(export: true))
        }
        out.append(UInt8(ascii: "}"))
    }

    private static func body(_ request: Request, _ out: inout [UInt8]) {
        func path(_ p: Path) { append(&out, #"{"p":"#); JSONWriter.writeString(p.description, to: &out) }
        switch request {
        case let .listen(p, query, tag, hash):
            path(p)
            if let query { append(&out, #","q":"#); query.wireObject.write(to: &out) }
            if let tag { append(&out, #","t":\#(tag)"#) }
            append(&out, #","h":"#)
            JSONWriter.writeString(hash, to: &out)
        case let .unlisten(p, query, tag):
            path(p)
            if let query { append(&out, #","q":"#); query.wireObject.write(to: &out) }
            if let tag { append(&out, #","t":\#(tag)"#) }
        case .get(let p):
            path(p)
            append(&out, #","q":{}"#)
        case let .put(p, data, hash):
            path(p)
            append(&out, #","d":"#)
            JSONWriter.write(data, to: &out, options: .init(export: true))
            if let hash { append(&out, #","h":"#); JSONWriter.writeString(hash, to: &out) }
        case let .merge(p, updates):
            path(p)
            append(&out, #","d":"#)
            updatesObject(updates, &out)
        case .stats(let counters):
            append(&out, #"{"c":"#)
            JSONValue.object(counters.sorted { $0.key < $1.key }.map { ($0.key, .number(Double($0.value))) }).write(to: &out)
        case let .onDisconnectPut(p, data):
            path(p)
            append(&out, #","d":"#)
            JSONWriter.write(data, to: &out, options: .init(export: true))
        case let .onDisconnectMerge(p, updates):
            path(p)
            append(&out, #","d":"#)
            updatesObject(updates, &out)
        case .onDisconnectCancel(let p):
            path(p)
            append(&out, #","d":null"#)
        case .auth(let credential, _):
            append(&out, #"{"cred":"#)
            JSONWriter.writeString(credential, to: &out)
        case .unauth:
            out.append(UInt8(ascii: "{"))
        }
        out.append(UInt8(ascii: "}"))
    }

    // MARK: Decoding

    public static func decode(_ text: String) throws -> Message {
        let json: JSONValue
        do { json = try JSONValue.parse(text) } catch { throw WireError("message is not JSON: \(error)") }
        guard let layer = json["t"]?.string, let payload = json["d"] else {
            throw WireError("message needs \"t\" and \"d\"")
        }
        switch layer {
        case "c": return try decodeControl(payload)
        case "d": return try decodeData(payload)
        default: throw WireError("unknown message layer \"\(layer)\"")
        }
    }

    private static func decodeControl(_ payload: JSONValue) throws -> Message {
        guard let type = payload["t"]?.string else { throw WireError("control message needs \"t\"") }
        let d = payload["d"] ?? .null
        switch type {
        case "h":
            guard let ts = d["ts"]?.number else { throw WireError("handshake needs \"ts\"") }
            return .handshake(Handshake(timestamp: Int64(ts), version: d["v"]?.string ?? "5", host: d["h"]?.string ?? "",
                                        sessionID: d["s"]?.string ?? ""))
        case "p": return .ping
        case "o": return .pong
        case "r": return .reset(host: d.string ?? "")
        case "s": return .shutdown(reason: d.string ?? "")
        case "e": return .serverError(d.string ?? d.serialized())
        default: throw WireError("unknown control message \"\(type)\"")
        }
    }

    private static func decodeData(_ payload: JSONValue) throws -> Message {
        let id = payload["r"]?.number.map { Int($0) }
        let body = payload["b"] ?? .object([])
        if let action = payload["a"]?.string {
            if let id { return .request(id: id, try decodeRequest(action, body, id: id)) }
            return .push(try decodePush(action, body))
        }
        guard let id else { throw WireError("data message needs \"r\" or \"a\"") }
        guard let status = body["s"]?.string else { throw WireError("response needs a status", requestID: id) }
        let data = body["d"] ?? .null
        if status == "ok" {
            return .response(id: id, Response(status: "ok", data: data == .string("") ? .empty : Node(json: data)))
        }
        return .response(id: id, .error(status, data.string ?? data.serialized()))
    }

    private static func path(_ body: JSONValue, id: Int?) throws -> Path {
        guard let text = body["p"]?.string else { throw WireError("the request needs a path \"p\"", requestID: id) }
        let path = Path(text)
        do { try path.validate() } catch { throw WireError("\(error)", requestID: id) }
        return path
    }

    /// Client data, checked with the database's rules at the place it is written.
    private static func data(_ json: JSONValue, at path: Path, id: Int?) throws -> Node {
        do {
            return try JSONReader.parse(json.serialized(), options: .init(base: path))
        } catch {
            throw WireError("invalid data for \(path): \(error)", requestID: id)
        }
    }

    private static func query(_ body: JSONValue, id: Int?) throws -> QueryParams? {
        guard let q = body["q"], case .object(let members) = q, !members.isEmpty else { return nil }
        if let l = q["l"] {
            guard let n = l.number, n >= 1, n == n.rounded(), n <= Double(Int32.max) else {
                throw WireError("the query limit \"l\" must be a positive integer", requestID: id)
            }
        }
        if let vf = q["vf"], vf.string != "l" && vf.string != "r" {
            throw WireError("the query's \"vf\" must be \"l\" or \"r\"", requestID: id)
        }
        for bound in ["sp", "ep"] {
            if case .object? = q[bound] { throw WireError("a query bound must be a string, number, boolean or null", requestID: id) }
            if case .array? = q[bound] { throw WireError("a query bound must be a string, number, boolean or null", requestID: id) }
        }
        if let i = q["i"], i.string == nil || i.string!.isEmpty {
            throw WireError("the query index \"i\" must be .key, .value, .priority or a child path", requestID: id)
        }
        return QueryParams(wire: q)
    }

    private static func decodeRequest(_ action: String, _ body: JSONValue, id: Int) throws -> Request {
        switch action {
        case "q", "l":
            return .listen(path: try path(body, id: id), query: try query(body, id: id), tag: body["t"]?.number.map { Int($0) },
                           hash: body["h"]?.string ?? "")
        case "n", "u":
            return .unlisten(path: try path(body, id: id), query: try query(body, id: id), tag: body["t"]?.number.map { Int($0) })
        case "g":
            return .get(path: try path(body, id: id))
        case "p":
            let p = try path(body, id: id)
            return .put(path: p, data: try data(body["d"] ?? .null, at: p, id: id), hash: body["h"]?.string)
        case "m":
            let p = try path(body, id: id)
            guard case .object(let members)? = body["d"] else { throw WireError("a merge needs an object \"d\"", requestID: id) }
            let updates = try members.map { key, value -> Update in
                let relative = Path(key)
                return Update(relative, try data(value, at: p.appending(relative), id: id))
            }
            return .merge(path: p, data: updates)
        case "o":
            let p = try path(body, id: id)
            return .onDisconnectPut(path: p, data: try data(body["d"] ?? .null, at: p, id: id))
        case "om":
            let p = try path(body, id: id)
            guard case .object(let members)? = body["d"] else { throw WireError("an onDisconnect update needs an object \"d\"", requestID: id) }
            return .onDisconnectMerge(path: p, data: try members.map { key, value in
                Update(Path(key), try data(value, at: p.appending(Path(key)), id: id))
            })
        case "oc":
            return .onDisconnectCancel(path: try path(body, id: id))
        case "auth", "gauth":
            guard let credential = body["cred"]?.string else { throw WireError("auth needs a credential \"cred\"", requestID: id) }
            return .auth(credential: credential, google: action == "gauth")
        case "unauth":
            return .unauth
        case "s":
            let counters = body["c"]?.members?.compactMap { key, value in value.number.map { (key, Int($0)) } } ?? []
            return .stats(Dictionary(counters, uniquingKeysWith: { $1 }))
        default:
            throw WireError("unknown action \"\(action)\"", requestID: id)
        }
    }

    private static func decodePush(_ action: String, _ body: JSONValue) throws -> Push {
        let p = Path(body["p"]?.string ?? "")
        let tag = body["t"]?.number.map { Int($0) }
        switch action {
        case "d":
            return .data(path: p, data: Node(json: body["d"] ?? .null), tag: tag)
        case "m":
            let updates = (body["d"]?.members ?? []).map { Update(Path($0.0), Node(json: $0.1)) }
            return .merge(path: p, data: updates, tag: tag)
        case "c":
            let q = body["q"]?.array?.first ?? body["q"]
            return .listenRevoked(path: p, query: q.flatMap { $0.members?.isEmpty == false ? QueryParams(wire: $0) : nil })
        case "ac":
            return .authRevoked(status: body["s"]?.string ?? "", reason: body["d"]?.string ?? "")
        default:
            throw WireError("unknown push \"\(action)\"")
        }
    }
}

/// Splits long messages into frames and joins them again (the count-frame rule).
public enum WireFraming {
    public static let maxFrame = 16384

    /// The frames for one message: itself, or a count frame and 16384-unit pieces (never
    /// splitting a surrogate pair, so each frame is valid UTF-8).
    public static func frames(for text: String) -> [String] {
        let units = Array(text.utf16)
        guard units.count > maxFrame else { return [text] }
        var pieces: [String] = []
        var start = 0
        while start < units.count {
            var end = min(start + maxFrame, units.count)
            if end < units.count, UTF16.isLeadSurrogate(units[end - 1]) { end -= 1 }
            pieces.append(String(decoding: units[start..<end], as: UTF16.self))
            start = end
        }
        return [String(pieces.count)] + pieces
    }

    /// Joins incoming frames: a frame of at most 6 digits announces how many follow; "0" is a
    /// keepalive and is ignored.
    public struct Assembler {
        private var expected = 0
        private var parts: [String] = []

        public init() {}

        public mutating func receive(_ frame: String) -> String? {
            if expected > 0 {
                parts.append(frame)
                if parts.count == expected {
                    defer { parts = []; expected = 0 }
                    return parts.joined()
                }
                return nil
            }
            if frame.count <= 6, let count = Int(frame) {
                if count > 0 { expected = count }
                return nil
            }
            return frame
        }
    }
}
