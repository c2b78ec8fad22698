import Dispatch
import RTDBData

/// One operation a database ran, as `monitor` shows it and the profiler's stream
/// (`/.settings/profile.json`) sends it: named as Firebase's profiler names them, with the
/// fields `firebase database:profile` reads (`path` as keys, `querySet`, `millis`, `bytes`,
/// `client`, `allowed`, `unIndexed`, `timestamp`) and this server's own beside them.
public struct OperationRecord: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case connect = "concurrent-connect"
        case disconnect = "concurrent-disconnect"
        case realtimeRead = "realtime-read"
        case realtimeWrite = "realtime-write"
        case realtimeUpdate = "realtime-update"
        case realtimeTransaction = "realtime-transaction"
        case listen = "listener-listen"
        case broadcast = "listener-broadcast"
        case unlisten = "listener-unlisten"
        case restRead = "rest-read"
        case restWrite = "rest-write"
        case restUpdate = "rest-update"

        /// Whether it carries data to the database (its bytes came in) rather than out.
        public var isWrite: Bool {
            switch self {
            case .realtimeWrite, .realtimeUpdate, .realtimeTransaction, .restWrite, .restUpdate: return true
            default: return false
            }
        }
    }

    /// Who an operation came from: its connection (`rest` for a REST request), the address
    /// it came from, and whose credential it carried: the owner's, a user's (its uid), or none.
    /// A class: a connection makes one and its operations share it, so a record is copied
    /// with one retain for it, not one per string.
    public final class Client: Sendable, Equatable {
        public let id: String
        public let address: String
        public let owner: Bool
        public let user: String?

        public init(id: String, address: String, owner: Bool = false, user: String?) {
            self.id = id
            self.address = address
            self.owner = owner
            self.user = user
        }

        public static func == (a: Client, b: Client) -> Bool {
            a === b || (a.id == b.id && a.address == b.address && a.owner == b.owner && a.user == b.user)
        }
    }

    public var kind: Kind
    /// Where; nil for a connection's start and end.
    public var path: Path?
    /// A read's or a listen's query; held in a box of its own, so a record (most have none)
    /// stays small to copy.
    public var query: QueryParams? {
        get { queryBox?.params }
        set { queryBox = newValue.map(QueryBox.init) }
    }
    private var queryBox: QueryBox?
    /// When it ended, in milliseconds since the epoch.
    public var timestamp: Double
    /// Its time on the database, in microseconds.
    public var micros: Int
    /// The bytes it carried: a write's data in, a read's or a broadcast's out.
    public var bytes: Int
    /// Nil for a broadcast, which is the database's own.
    public var client: Client?
    /// Nil where the rules do not decide (a connection, an unlisten, a broadcast).
    public var allowed: Bool?
    /// A query ordered by a child the rules give no `.indexOn`.
    public var unindexed: Bool
    /// A broadcast's number of connections sent to.
    public var clientsUpdated: Int?

    public init(kind: Kind, path: Path?, query: QueryParams? = nil, timestamp: Double, micros: Int, bytes: Int, client: Client?,
                allowed: Bool? = nil, unindexed: Bool = false, clientsUpdated: Int? = nil) {
        self.kind = kind
        self.path = path
        self.queryBox = query.map(QueryBox.init)
        self.timestamp = timestamp
        self.micros = micros
        self.bytes = bytes
        self.client = client
        self.allowed = allowed
        self.unindexed = unindexed
        self.clientsUpdated = clientsUpdated
    }

    private final class QueryBox: Sendable, Equatable {
        let params: QueryParams
        init(_ params: QueryParams) { self.params = params }
        static func == (a: QueryBox, b: QueryBox) -> Bool { a.params == b.params }
    }

    /// A moment on a clock that only goes forward, for `micros(since:)`.
    public static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// The microseconds since `started` (a `now()`).
    public static func micros(since started: UInt64) -> Int { Int(clamping: (now() &- started) / 1000) }

    /// The profiler's shape, written straight to bytes (a monitored server writes one per
    /// operation): `millis` with microseconds as its fraction, and `querySet`'s entry naming
    /// the index as the profiler's report reads it (`orderBy`, `index.path`).
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        writeJSON(to: &out)
        return out
    }

    /// The members of a record's JSON, in the order `writeJSON` writes those it has.
    public static let members = ["name", "path", "querySet", "millis", "micros", "bytes", "client", "allowed", "unIndexed",
                                 "clientsUpdated", "timestamp"]

    /// `jsonBytes`, appended to `out`. Each member after `name` is written with the comma
    /// before it: the order is fixed, so nothing tracks which came first.
    private func writeJSON(to out: inout [UInt8]) {
        @inline(__always) func raw(_ text: StaticString) { out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)) }
        @inline(__always) func number(_ value: Double) { JSONWriter.writeNumber(value, to: &out) }
        raw("{\"name\":")
        JSONWriter.writeString(kind.rawValue, to: &out)
        if let path {
            raw(",\"path\":[")
            for (i, key) in path.keys.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.writeString(key, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        if let query, !query.isDefault {
            var entry: [(String, JSONValue)] = [("orderBy", .string(query.index.description))]
            if case .child(let child) = query.index { entry.append(("index", .object([("path", .array(child.keys.map { .string($0) }))]))) }
            entry.append(("params", query.wireObject))
            raw(",\"querySet\":")
            JSONValue.array([.object(entry)]).write(to: &out)
        }
        // Written from the integer, as JavaScript writes micros / 1000 (no String on the way);
        // a time that is negative or past 2^52 µs (only ever read from elsewhere) as the
        // number it is, since a Double no longer holds its every digit.
        raw(",\"millis\":")
        let exact = micros >= 0 && micros < 1 << 52
        number(exact ? Double(micros / 1000) : Double(micros) / 1000)
        if exact && micros % 1000 != 0 {
            var fraction = micros % 1000, digits = 3
            while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
            out.append(UInt8(ascii: "."))
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
                divisor /= 10
            }
        }
        raw(",\"micros\":")
        number(Double(micros))
        raw(",\"bytes\":")
        number(Double(bytes))
        if let client {
            raw(",\"client\":{\"id\":")
            JSONWriter.writeString(client.id, to: &out)
            raw(",\"remoteAddress\":")
            JSONWriter.writeString(client.address, to: &out)
            raw(",\"user\":")
            if let user = client.user { JSONWriter.writeString(user, to: &out) } else { raw("null") }
            if client.owner { raw(",\"owner\":true") }
            out.append(UInt8(ascii: "}"))
        }
        if let allowed { raw(allowed ? ",\"allowed\":true" : ",\"allowed\":false") }
        if unindexed { raw(",\"unIndexed\":true") }
        if let clientsUpdated {
            raw(",\"clientsUpdated\":")
            number(Double(clientsUpdated))
        }
        raw(",\"timestamp\":")
        number(timestamp)
        out.append(UInt8(ascii: "}"))
    }

    /// The operation `json` (`jsonBytes` parsed) describes; nil when it is not one (a stream's other events).
    public init?(json: JSONValue) {
        guard let name = json["name"]?.string, let kind = Kind(rawValue: name), let timestamp = json["timestamp"]?.number else { return nil }
        var path: Path?
        if case .array(let keys)? = json["path"] {
            let strings = keys.compactMap(\.string)
            guard strings.count == keys.count else { return nil }
            path = Path(keys: strings)
        }
        var query: QueryParams?
        if case .array(let set)? = json["querySet"], let params = set.first?["params"] { query = QueryParams(wire: params) }
        let micros = json["micros"]?.number ?? (json["millis"]?.number).map { $0 * 1000 } ?? 0
        var client: Client?
        if let object = json["client"], let id = object["id"]?.string, let address = object["remoteAddress"]?.string {
            client = Client(id: id, address: address, owner: object["owner"]?.bool ?? false, user: object["user"]?.string)
        }
        self.init(kind: kind, path: path, query: query, timestamp: timestamp, micros: Int(clamping: Int64(exactly: micros.rounded()) ?? 0),
                  bytes: json["bytes"]?.int ?? 0, client: client, allowed: json["allowed"]?.bool,
                  unindexed: json["unIndexed"]?.bool ?? false, clientsUpdated: json["clientsUpdated"]?.int)
    }
}
