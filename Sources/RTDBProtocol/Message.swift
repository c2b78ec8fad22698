import RTDBData

/// A request a client sends (`{"t":"d","d":{"r":N,"a":ACTION,"b":BODY}}`).
public enum Request: Sendable, Equatable {
    /// `q`: listen at `path` (a query with a tag, or the plain listen); `hash` is the hash of
    /// what the client already has.
    case listen(path: Path, query: QueryParams?, tag: Int?, hash: String)
    /// `n`: stop listening.
    case unlisten(path: Path, query: QueryParams?, tag: Int?)
    /// `g`: read once, the whole location or a query's window of it.
    case get(path: Path, query: QueryParams?)
    /// `p`: overwrite; with `hash`, only if the current value still hashes to it.
    case put(path: Path, data: Node, hash: String?)
    /// `m`: apply each relative path → value atomically; with `guards`, only if each guarded
    /// value is still the one the client read (`UpdateGuard`).
    case merge(path: Path, data: [UpdateEntry], guards: [UpdateGuard] = [])
    /// `s`: client statistics; the server accepts and ignores them.
    case stats([String: Int])
    /// `o`: when this connection ends, overwrite `path` with `data`.
    case onDisconnectPut(path: Path, data: Node)
    /// `om`: when this connection ends, apply this multi-path update.
    case onDisconnectMerge(path: Path, data: [UpdateEntry])
    /// `oc`: forget the onDisconnect operations at `path` and below.
    case onDisconnectCancel(path: Path)
    /// `auth` / `gauth`: a Firebase ID token, a database secret or an OAuth2 token. An admin
    /// may act as someone else: `acting` is the `auth` object the rules then see (`authvar`),
    /// or null for no one (`noauth`).
    case auth(credential: String, google: Bool, acting: JSONValue? = nil)
    /// `unauth`
    case unauth

    public var action: String {
        switch self {
        case .listen: return "q"
        case .unlisten: return "n"
        case .get: return "g"
        case .put: return "p"
        case .merge: return "m"
        case .stats: return "s"
        case .onDisconnectPut: return "o"
        case .onDisconnectMerge: return "om"
        case .onDisconnectCancel: return "oc"
        case .auth(_, let google, _): return google ? "gauth" : "auth"
        case .unauth: return "unauth"
        }
    }
}

/// Data the server sends unasked, for a listen: an overwrite or a merge at a path, tagged
/// when it belongs to one query only.
public enum Push: Sendable, Equatable {
    /// `d`
    case data(path: Path, data: Node, tag: Int?)
    /// `m`: each relative path below `path` gets its value.
    case merge(path: Path, data: [UpdateEntry], tag: Int?)
    /// `c`: the listen was cancelled (for example, permission was revoked).
    case listenRevoked(path: Path, query: QueryParams?)
    /// `ac`: the connection's credential is no longer valid (e.g. `expired_token`).
    case authRevoked(status: ResponseStatus, reason: String)
}

/// A server's answer to one request.
public struct Response: Sendable, Equatable {
    public var status: ResponseStatus
    /// The data for `g`; a human-readable explanation for an error status.
    public var data: Node
    /// True for an answer that carries a value (`g`), sent as JSON even when empty (`null`);
    /// a write's acknowledgement carries none and is sent as `""`.
    public var carriesValue: Bool
    /// Warnings with an `ok` to a listen (`{"w": ["no_index"]}` as its data: the query's
    /// child has no `.indexOn` in the rules), and to a `g` of such a query (`"w"` beside its
    /// data, which the official clients do not read and this one says).
    public var warnings: [String] = []

    public init(status: ResponseStatus, data: Node = .empty) {
        self.status = status
        self.data = data
        self.carriesValue = status == .ok && !data.isEmpty
    }

    /// The answer to a read: the value, `null` when there is none.
    public static func value(_ node: Node) -> Response {
        var response = Response(status: .ok, data: node)
        response.carriesValue = true
        return response
    }

    public static let ok = Response(status: .ok)
    public static func ok(warnings: [String]) -> Response {
        var response = Response.ok
        response.warnings = warnings
        return response
    }
    public static func error(_ status: ResponseStatus, _ message: String) -> Response {
        Response(status: status, data: Node(.string(message)))
    }

    public var isOK: Bool { status == .ok }
    public var message: String {
        if case .leaf(.string(let s)) = data.content { return s }
        return ""
    }
}

/// The server's hello, the first message on every connection.
public struct Handshake: Sendable, Equatable {
    public var timestamp: Int64
    public var version: String
    public var host: String
    public var sessionID: String
    /// The server applies a write once though it is sent again, when the write names its
    /// origin (`"once":true`; see `WriteOrigin`). Only rtdb's own server offers it.
    public var exactlyOnce: Bool
    /// The server checks a merge's guards (`"guards":true`; see `UpdateGuard`). A server
    /// that does not say so would apply a guarded merge unguarded: it is never sent one.
    public var guardedMerge: Bool
    public init(timestamp: Int64, version: String = "5", host: String, sessionID: String, exactlyOnce: Bool = false,
                guardedMerge: Bool = false) {
        self.timestamp = timestamp; self.version = version; self.host = host; self.sessionID = sessionID
        self.exactlyOnce = exactlyOnce
        self.guardedMerge = guardedMerge
    }
}

/// Every message of the realtime protocol, in either direction.
public enum Message: Sendable, Equatable {
    // Control layer (`"t":"c"`).
    case handshake(Handshake)
    case ping
    case pong
    case reset(host: String)
    case shutdown(reason: String)
    case serverError(String)
    // Data layer (`"t":"d"`).
    /// A write may name its origin, for a server that offers `exactlyOnce`.
    case request(id: Int, Request, origin: WriteOrigin? = nil)
    case response(id: Int, Response)
    case push(Push)
}
