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
        String(decoding: encodeBytes(message), as: UTF8.self)
    }

    /// The message's JSON as UTF-8 bytes.
    public static func encodeBytes(_ message: Message) -> [UInt8] {
        encodeBytes(message, limit: .max) ?? []  // never nil without a limit
    }

    /// The message's JSON, or nil when it is longer than `limit` bytes, found out without
    /// writing much more than that of the data it carries.
    public static func encodeBytes(_ message: Message, limit: Int) -> [UInt8]? {
        var out: [UInt8] = []
        /// Writes data, unless the message would then be over the limit.
        func data(_ node: Node) -> Bool {
            let room = limit - out.count
            return JSONWriter.write(node, to: &out, options: .init(export: true), limit: room)
        }
        out.reserveCapacity(64)
        switch message {
        case .handshake(let h):
            append(&out, #"{"t":"c","d":{"t":"h","d":{"ts":\#(h.timestamp),"v":"#)
            JSONWriter.writeString(h.version, to: &out)
            append(&out, #","h":"#)
            JSONWriter.writeString(h.host, to: &out)
            append(&out, #","s":"#)
            JSONWriter.writeString(h.sessionID, to: &out)
            if h.exactlyOnce { append(&out, #","once":true"#) }
            if h.guardedMerge { append(&out, #","guards":true"#) }
            append(&out, "}}}")
        case .ping: append(&out, #"{"t":"c","d":{"t":"p","d":{}}}"#)
        case .pong: append(&out, #"{"t":"c","d":{"t":"o","d":{}}}"#)
        case .reset(let host): control(&out, "r", host)
        case .shutdown(let reason): control(&out, "s", reason)
        case .serverError(let text): control(&out, "e", text)
        case let .request(id, request, origin):
            // Piece by piece: an interpolated header would be a String made for every message.
            append(&out, #"{"t":"d","d":{"r":"#)
            append(&out, String(id))  // exact for every Int (a Double is not); inline below 16 digits
            append(&out, #","a":""#)
            append(&out, request.action)
            append(&out, #"","b":"#)
            body(request, &out)
            if let origin {
                append(&out, #","o":{"c":"#)
                JSONWriter.writeString(origin.client, to: &out)
                append(&out, #","f":\#(origin.floor)}"#)
            }
            append(&out, "}}")
        case let .response(id, response):
            append(&out, #"{"t":"d","d":{"r":"#)
            append(&out, String(id))
            append(&out, #","b":{"s":"#)
            JSONWriter.writeString(response.status.rawValue, to: &out)
            append(&out, #","d":"#)
            if response.isOK, !response.carriesValue, !response.warnings.isEmpty {
                JSONValue.object([("w", .array(response.warnings.map(JSONValue.string)))]).write(to: &out)
            } else if response.isOK, !response.carriesValue {
                append(&out, #""""#)
            } else if !data(response.data) {
                return nil
            }
            if response.carriesValue && !response.warnings.isEmpty {
                append(&out, #","w":"#)
                JSONValue.array(response.warnings.map(JSONValue.string)).write(to: &out)
            }
            append(&out, "}}}")
        case .push(let push):
            append(&out, #"{"t":"d","d":{"a":"#)
            switch push {
            case let .data(path, node, tag):
                append(&out, #""d","b":{"p":"#)
                JSONWriter.writePath(path, leadingSlash: false, to: &out)
                append(&out, #","d":"#)
                guard data(node) else { return nil }
                if let tag { append(&out, #","t":\#(tag)"#) }
            case let .merge(path, updates, tag):
                append(&out, #""m","b":{"p":"#)
                JSONWriter.writePath(path, leadingSlash: false, to: &out)
                append(&out, #","d":"#)
                updatesObject(updates, &out)
                if let tag { append(&out, #","t":\#(tag)"#) }
            case let .listenRevoked(path, query):
                append(&out, #""c","b":{"p":"#)
                JSONWriter.writePath(path, leadingSlash: false, to: &out)
                // The JS client maps over q: a one-element array.
                if let query { append(&out, #","q":["#); query.wireObject.write(to: &out); append(&out, "]") }
            case let .authRevoked(status, reason):
                append(&out, #""ac","b":{"s":"#)
                JSONWriter.writeString(status.rawValue, to: &out)
                append(&out, #","d":"#)
                JSONWriter.writeString(reason, to: &out)
            }
            append(&out, "}}}")
        }
        return out.count <= limit ? out : nil
    }

    private static func append(_ out: inout [UInt8], _ text: String) { out.append(contentsOf: text.utf8) }

    private static func control(_ out: inout [UInt8], _ type: String, _ text: String) {
        append(&out, #"{"t":"c","d":{"t":"\#(type)","d":"#)
        JSONWriter.writeString(text, to: &out)
        append(&out, "}}")
    }

    private static func updatesObject(_ updates: [UpdateEntry], _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (i, update) in updates.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writePath(update.path, leadingSlash: false, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(update.value, to: &out, options: .init(export: true))
        }
        out.append(UInt8(ascii: "}"))
    }

    private static func body(_ request: Request, _ out: inout [UInt8]) {
        func path(_ p: Path) { append(&out, #"{"p":"#); JSONWriter.writePath(p, leadingSlash: true, to: &out) }
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
        case let .get(p, query):
            path(p)
            append(&out, #","q":"#)
            if let query { query.wireObject.write(to: &out) } else { append(&out, "{}") }
        case let .put(p, data, hash):
            path(p)
            append(&out, #","d":"#)
            JSONWriter.write(data, to: &out, options: .init(export: true))
            if let hash { append(&out, #","h":"#); JSONWriter.writeString(hash, to: &out) }
        case let .merge(p, updates, guards):
            path(p)
            append(&out, #","d":"#)
            updatesObject(updates, &out)
            if !guards.isEmpty {
                append(&out, #","h":{"#)
                for (i, guarded) in guards.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    JSONWriter.writePath(guarded.path, leadingSlash: false, to: &out)
                    out.append(UInt8(ascii: ":"))
                    JSONWriter.writeString(guarded.hash, to: &out)
                }
                out.append(UInt8(ascii: "}"))
            }
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
        case let .auth(credential, _, acting):
            append(&out, #"{"cred":"#)
            JSONWriter.writeString(credential, to: &out)
            if let acting {
                append(&out, acting == .null ? #","noauth":true"# : #","authvar":"#)
                if acting != .null { acting.write(to: &out) }
            }
        case .unauth:
            out.append(UInt8(ascii: "{"))
        }
        out.append(UInt8(ascii: "}"))
    }

    // MARK: Decoding

    /// The members of the envelope whose value is data (`{"t":"d","d":{…,"b":{"d": DATA}}}`):
    /// read once, straight into a `Node`, never as an intermediate JSON tree.
    private static let dataPath = ["d", "b", "d"]

    public static func decode(_ text: String) throws -> Message {
        var text = text
        return try text.withUTF8 { try decode(bytes: $0) }
    }

    /// Reads one message, whose data keeps `message` rather than a copy of its part (see
    /// `JSONReader.parse(data:range:options:)`).
    public static func decode(_ message: [UInt8]) throws -> Message {
        try message.withUnsafeBufferPointer { try decode(bytes: $0, owner: message) }
    }

    /// Reads one message. Nothing in it is trusted: numbers that must be integers are checked
    /// to be exactly that, data is checked with the database's rules, and any failure is a
    /// `WireError` (with the request number when one was read).
    public static func decode(bytes: UnsafeBufferPointer<UInt8>) throws -> Message {
        try decode(bytes: bytes, owner: nil)
    }

    /// `owner`: the array `bytes` lends, when there is one.
    private static func decode(bytes: UnsafeBufferPointer<UInt8>, owner: [UInt8]?) throws -> Message {
        if let common = decodeCommon(bytes: bytes, owner: owner) { return common }
        return try decodeEnvelope(bytes: bytes, owner: owner)
    }

    /// A put, a merge or an acknowledgement in its usual form, or nil (see `WireShortcut`).
    static func decodeCommon(bytes: UnsafeBufferPointer<UInt8>, owner: [UInt8]?) -> Message? {
        var shortcut = WireShortcut(bytes)
        return shortcut.decode { range, path, isMerge, id in
            let raw = RawData(bytes: bytes, owner: owner, range: range)
            return isMerge ? .merge(path: path, data: try updates(raw, at: path, id: id))
                : .put(path: path, data: try data(raw, at: path, id: id), hash: nil)
        }
    }

    /// Reads the envelope as a JSON tree, whatever its form (see `WireShortcut` for the
    /// common ones), and words what is wrong with it.
    static func decodeEnvelope(bytes: UnsafeBufferPointer<UInt8>, owner: [UInt8]?) throws -> Message {
        let json: JSONValue
        let raw: Range<Int>?
        do { (json, raw) = try JSONValue.parse(bytes: bytes, capturing: dataPath) } catch { throw WireError("message is not JSON: \(error)") }
        guard let layer = json["t"]?.string, let payload = json["d"] else {
            throw WireError("message needs \"t\" and \"d\"")
        }
        switch layer {
        case "c": return try decodeControl(payload)
        case "d": return try decodeData(payload, RawData(bytes: bytes, owner: owner, range: raw))
        default: throw WireError("unknown message layer \"\(layer)\"")
        }
    }

    /// The bytes of a data message's `d` member, not yet read.
    private struct RawData {
        let bytes: UnsafeBufferPointer<UInt8>
        /// The array `bytes` lends, which a large value keeps instead of a copy.
        let owner: [UInt8]?
        let range: Range<Int>?

        var slice: UnsafeBufferPointer<UInt8>? { range.map { UnsafeBufferPointer(rebasing: bytes[$0]) } }

        /// The member is exactly `""` (a write's acknowledgement).
        var isEmptyString: Bool { slice.map { $0.count == 2 && $0[0] == 0x22 && $0[1] == 0x22 } ?? false }

        func node(at path: Path, serverValues: Bool) throws -> Node {
            guard let slice else { return .empty }
            let options = JSONReader.Options(base: path, allowServerValues: serverValues)
            if let owner, let range { return try JSONReader.parse(data: owner, range: range, options: options) }
            return try JSONReader.parse(bytes: slice, options: options)
        }

        func updates(at path: Path) throws -> [UpdateEntry] {
            guard let slice else { throw WireError("an update needs a JSON object \"d\"") }
            return try JSONReader.parseUpdate(bytes: slice, base: path).map { UpdateEntry($0.0, $0.1) }
        }

        func json() throws -> JSONValue {
            guard let slice else { return .null }
            return try JSONValue.parse(bytes: slice, capturing: nil).value
        }
    }

    /// An integer field: absent is nil; present, it must be an exact integer.
    private static func integer(_ value: JSONValue?, _ name: String, id: Int? = nil) throws -> Int? {
        guard let value else { return nil }
        guard let n = value.int else { throw WireError("\"\(name)\" must be an integer", requestID: id) }
        return n
    }

    private static func decodeControl(_ payload: JSONValue) throws -> Message {
        guard let type = payload["t"]?.string else { throw WireError("control message needs \"t\"") }
        let d = payload["d"] ?? .null
        switch type {
        case "h":
            // Milliseconds since 1970: anything before then or after the year 33658 is not a clock.
            guard let ts = d["ts"]?.number, ts >= 0, ts <= 1e15, let timestamp = Int64(exactly: ts.rounded()) else {
                throw WireError("handshake needs a timestamp \"ts\" in milliseconds since 1970")
            }
            return .handshake(Handshake(timestamp: timestamp, version: d["v"]?.string ?? "5", host: d["h"]?.string ?? "",
                                        sessionID: d["s"]?.string ?? "", exactlyOnce: d["once"]?.bool == true,
                                        guardedMerge: d["guards"]?.bool == true))
        case "p": return .ping
        case "o": return .pong
        case "r": return .reset(host: d.string ?? "")
        case "s": return .shutdown(reason: d.string ?? "")
        case "e": return .serverError(d.string ?? d.serialized())
        default: throw WireError("unknown control message \"\(type)\"")
        }
    }

    private static func decodeData(_ payload: JSONValue, _ data: RawData) throws -> Message {
        let id = try integer(payload["r"], "r")
        let body = payload["b"] ?? .object([])
        if let action = payload["a"]?.string {
            if let id { return .request(id: id, try decodeRequest(action, body, data, id: id), origin: try origin(payload["o"], id: id)) }
            return .push(try decodePush(action, body, data))
        }
        guard let id else { throw WireError("data message needs \"r\" or \"a\"") }
        guard let status = body["s"]?.string else { throw WireError("response needs a status", requestID: id) }
        if status == "ok" {
            if data.isEmptyString || data.range == nil { return .response(id: id, .ok) }
            do {
                var answer = Response.value(try data.node(at: .root, serverValues: false))
                if case .array(let warnings)? = body["w"] { answer.warnings = warnings.compactMap(\.string) }
                return .response(id: id, answer)
            } catch {
                throw WireError("invalid data in the answer: \(error)", requestID: id)
            }
        }
        let message = (try? data.json()).map { $0.string ?? $0.serialized() } ?? ""
        return .response(id: id, .error(ResponseStatus(status), message))
    }

    /// A write's origin: a client name of 1 to 64 bytes, and a floor from 0 to the request's
    /// own number, which must be below 2^62 (a server keeps both).
    private static func origin(_ value: JSONValue?, id: Int) throws -> WriteOrigin? {
        guard let value else { return nil }
        guard let client = value["c"]?.string, !client.isEmpty, client.utf8.count <= WriteOrigin.maximumClientLength else {
            throw WireError("a write's origin \"o\" needs a client \"c\" of 1 to \(WriteOrigin.maximumClientLength) bytes", requestID: id)
        }
        guard id >= 0 && id <= WriteOrigin.maximumRequest else {
            throw WireError("a write with an origin needs a request number \"r\" from 0 to 2^62-1", requestID: id)
        }
        guard let floor = try integer(value["f"], "f", id: id), floor >= 0 && floor <= id else {
            throw WireError("a write's origin \"o\" needs a floor \"f\", an integer from 0 to the request's number", requestID: id)
        }
        return WriteOrigin(client: client, floor: floor)
    }

    private static func path(_ body: JSONValue, id: Int?, priorityLast: Bool = false) throws -> Path {
        guard let text = body["p"]?.string else { throw WireError("the request needs a path \"p\"", requestID: id) }
        let path = Path(text)
        do { try path.validate(allowPriorityLast: priorityLast) } catch { throw WireError("\(error)", requestID: id) }
        return path
    }

    /// Client data, checked with the database's rules at the place it is written.
    private static func data(_ data: RawData, at path: Path, id: Int?) throws -> Node {
        do {
            return try data.node(at: path, serverValues: true)
        } catch {
            throw WireError("invalid data for \(path): \(error)", requestID: id)
        }
    }

    private static func updates(_ data: RawData, at path: Path, id: Int?) throws -> [UpdateEntry] {
        do {
            return try data.updates(at: path)
        } catch {
            throw WireError("invalid update for \(path): \(error)", requestID: id)
        }
    }

    /// A merge's `"h"`: relative paths (as an update's keys are written) to hashes.
    private static func guards(_ value: JSONValue?, at base: Path, id: Int?) throws -> [UpdateGuard] {
        guard let value, value != .null else { return [] }
        guard let members = value.members else { throw WireError("a merge's guards \"h\" must be an object of paths to hashes", requestID: id) }
        guard members.count <= UpdateGuard.maximumCount, Set(members.map(\.0)).count == members.count else {
            throw WireError("a merge takes at most \(UpdateGuard.maximumCount) guards \"h\", each path once", requestID: id)
        }
        return try members.map { key, hash in
            guard let hash = hash.string else { throw WireError("the guard of \(key) must be a hash (a string)", requestID: id) }
            let path = Path(key)
            do { try base.appending(path).validate() } catch {
                throw WireError("invalid guard path \(key): \(error)", requestID: id)
            }
            return UpdateGuard(path, hash: hash)
        }
    }

    private static func query(_ body: JSONValue, id: Int?) throws -> QueryParams? {
        guard let q = body["q"], case .object(let members) = q, !members.isEmpty else { return nil }
        if let l = q["l"] {
            guard let n = l.int, n >= 1, n <= Int(Int32.max) else {
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
        for key in ["sn", "en"] where q[key] != nil && q[key]?.string == nil {
            throw WireError("a query bound's key \"\(key)\" must be a string", requestID: id)
        }
        if let i = q["i"] {
            guard let index = i.string, !index.isEmpty else {
                throw WireError("the query index \"i\" must be .key, .value, .priority or a child path", requestID: id)
            }
            if ![".key", ".value", ".priority"].contains(index) {
                do { try Path(index).validate(allowInfo: false) } catch {
                    throw WireError("the query index \"i\" is not a valid child path: \(error)", requestID: id)
                }
            }
        }
        if let dp = q["dp"], !(dp.int.map(QueryParams.depths.contains) ?? false) {
            throw WireError("the query's depth \"dp\" must be a whole number from \(QueryParams.depths.lowerBound) to \(QueryParams.depths.upperBound)", requestID: id)
        }
        // A query object with nothing the protocol knows is the plain listen.
        let params = QueryParams(wire: q)
        return params.identifier == "default" ? nil : params
    }

    private static func decodeRequest(_ action: String, _ body: JSONValue, _ raw: RawData, id: Int) throws -> Request {
        switch action {
        case "q", "l":
            return .listen(path: try path(body, id: id), query: try query(body, id: id), tag: try integer(body["t"], "t", id: id),
                           hash: body["h"]?.string ?? "")
        case "n", "u":
            return .unlisten(path: try path(body, id: id), query: try query(body, id: id), tag: try integer(body["t"], "t", id: id))
        case "g":
            // A read may name a priority (`/a/.priority`), as the SDKs' `child(".priority")` does.
            return .get(path: try path(body, id: id, priorityLast: true), query: try query(body, id: id))
        case "p":
            let p = try path(body, id: id, priorityLast: true)
            return .put(path: p, data: try data(raw, at: p, id: id), hash: body["h"]?.string)
        case "m":
            let p = try path(body, id: id, priorityLast: true)
            return .merge(path: p, data: try updates(raw, at: p, id: id), guards: try guards(body["h"], at: p, id: id))
        case "o":
            let p = try path(body, id: id, priorityLast: true)
            return .onDisconnectPut(path: p, data: try data(raw, at: p, id: id))
        case "om":
            let p = try path(body, id: id, priorityLast: true)
            return .onDisconnectMerge(path: p, data: try updates(raw, at: p, id: id))
        case "oc":
            return .onDisconnectCancel(path: try path(body, id: id, priorityLast: true))
        case "auth", "gauth":
            guard let credential = body["cred"]?.string else { throw WireError("auth needs a credential \"cred\"", requestID: id) }
            var acting: JSONValue?
            if body["noauth"]?.bool == true {
                acting = .null
            } else if let authvar = body["authvar"], authvar != .null {
                guard authvar.members != nil else { throw WireError("authvar must be an object", requestID: id) }
                acting = authvar
            }
            return .auth(credential: credential, google: action == "gauth", acting: acting)
        case "unauth":
            return .unauth
        case "s":
            let counters = body["c"]?.members?.compactMap { key, value in value.int.map { (key, $0) } } ?? []
            return .stats(Dictionary(counters, uniquingKeysWith: { $1 }))
        default:
            throw WireError("unknown action \"\(action)\"", requestID: id)
        }
    }

    private static func decodePush(_ action: String, _ body: JSONValue, _ raw: RawData) throws -> Push {
        let p = Path(body["p"]?.string ?? "")
        do { try p.validate() } catch { throw WireError("a push names an invalid path: \(error)") }
        let tag = try integer(body["t"], "t")
        switch action {
        case "d":
            do { return .data(path: p, data: try raw.node(at: p, serverValues: false), tag: tag) } catch {
                throw WireError("invalid data in a push for \(p): \(error)")
            }
        case "m":
            do { return .merge(path: p, data: try raw.updates(at: p), tag: tag) } catch {
                throw WireError("invalid merge in a push for \(p): \(error)")
            }
        case "c":
            let q = body["q"]?.array?.first ?? body["q"]
            let query = try q.flatMap { $0.members?.isEmpty == false ? try Self.query(.object([("q", $0)]), id: nil) : nil }
            return .listenRevoked(path: p, query: query)
        case "ac":
            return .authRevoked(status: ResponseStatus(body["s"]?.string ?? ""), reason: (try? raw.json())?.string ?? "")
        default:
            throw WireError("unknown push \"\(action)\"")
        }
    }
}

/// Splits long messages into frames and joins them again (the count-frame rule).
public enum WireFraming {
    public static let maxFrame = 16384

    /// The frames for one message: itself, or a count frame and pieces of at most 16384
    /// UTF-16 units (never splitting a character, so each frame is valid UTF-8).
    public static func frames(for text: String) -> [String] {
        let bytes = Array(text.utf8)
        let (count, ranges) = frameRanges(for: bytes)
        return (count.map { [String($0)] } ?? []) + ranges.map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    /// The largest message either end accepts, in UTF-8 bytes: Firebase's limit for one write
    /// through the realtime protocol (16 MB), plus room for the envelope.
    public static let maxMessageBytes = 16 << 20 + 64 << 10
    /// The largest message a client accepts from its server: Firebase's limit for one read
    /// (256 MB). A server answers reads larger than a write may be.
    public static let maxResponseBytes = 256 << 20

    /// The frames for one message's UTF-8 bytes, as byte ranges: the whole, or (count frame
    /// first) pieces of at most 16384 UTF-16 units, cut between characters. Counting units
    /// on the UTF-8 bytes avoids converting a long message to UTF-16 and back.
    public static func frameRanges(for bytes: [UInt8]) -> (count: Int?, ranges: [Range<Int>]) {
        // Fewer bytes than the limit in units is always one frame (a unit takes at least a byte).
        if bytes.count <= maxFrame { return (nil, [0..<bytes.count]) }
        var ranges: [Range<Int>] = []
        var start = 0
        var units = 0
        var i = 0
        bytes.withUnsafeBufferPointer { b in
            guard let base = b.baseAddress else { return }
            let n = b.count
            while i < n {
                // Eight ASCII bytes at once (i is always at a character's first byte, so
                // eight bytes without a high bit are eight characters of one unit each).
                if units + 8 <= maxFrame, i + 8 <= n,
                   UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    units += 8
                    i += 8
                    continue
                }
                let lead = b[i]
                let (length, width) = lead < 0x80 ? (1, 1) : lead < 0xE0 ? (2, 1) : lead < 0xF0 ? (3, 1) : (4, 2)
                if units + width > maxFrame {
                    ranges.append(start..<i)
                    start = i
                    units = 0
                }
                units += width
                i += length
            }
        }
        ranges.append(start..<min(i, bytes.count))
        if ranges.count == 1 { return (nil, ranges) }
        return (ranges.count, ranges)
    }

    /// Joins incoming frames: a frame of at most 6 digits announces how many follow; "0" is a
    /// keepalive and is ignored. A message larger than `maxMessageBytes`, or a count above
    /// `maxParts`, is an error: the connection is to be closed, nothing is kept.
    public struct Assembler {
        private var expected = 0
        private var received = 0
        /// The parts so far, joined as they come: one buffer, which the message keeps.
        private var joined: [UInt8] = []
        private let maxBytes: Int
        /// The most parts a count frame may announce: a largest message cut into 16,384-unit
        /// frames, with room for peers that cut four times smaller.
        private var maxParts: Int { maxBytes / 4096 }

        /// `maxBytes`: the largest message accepted (`maxMessageBytes` from a client,
        /// `maxResponseBytes` from a server).
        public init(maxBytes: Int = WireFraming.maxMessageBytes) {
            self.maxBytes = maxBytes
        }

        /// The message complete with this frame, as UTF-8, or nil while parts are missing.
        public mutating func receive(_ frame: String) throws -> [UInt8]? {
            try receive(Array(frame.utf8))
        }

        /// The same, for a frame's bytes (UTF-8, as the transport checked): a message of one
        /// frame is that frame's array, not a copy.
        public mutating func receive(_ frame: [UInt8]) throws -> [UInt8]? {
            if expected > 0 {
                if joined.count + frame.count > maxBytes {
                    joined = []; expected = 0; received = 0
                    throw WireError("the message is larger than \(maxBytes >> 20) MiB, the limit for one message")
                }
                // Room for the whole message at once, estimated from the parts so far once an
                // eighth of them is here (growing by doubling held up to twice the message,
                // kept by the value read from it, and once both the old room and the new).
                let arrived = joined.count + frame.count
                if arrived > joined.capacity, (received + 1) * 8 >= expected {
                    joined.reserveCapacity(min(maxBytes, max(arrived, arrived / (received + 1) * expected)))
                }
                joined.append(contentsOf: frame)
                received += 1
                if received == expected {
                    defer { joined = []; expected = 0; received = 0 }
                    return joined
                }
                return nil
            }
            if frame.count <= 6, let count = Int(String(decoding: frame, as: UTF8.self)) {
                guard count >= 0, count <= maxParts else {
                    throw WireError("a message may be split into at most \(maxParts) frames, not \(count)")
                }
                if count > 0 { expected = count }
                return nil
            }
            if frame.count > maxBytes {
                throw WireError("the message is larger than \(maxBytes >> 20) MiB, the limit for one message")
            }
            return frame
        }
    }
}
