import RTDBData
import RTDBProtocol
import RTDBRules

/// What the database tells its monitors (`operations`): each realtime request (a read as it
/// is answered, a write once durable), each write's broadcast to the listens it changed, each
/// connection's start and end (`ServerSession`), and the REST requests their router reports.
/// Nothing is measured while no monitor watches, and nothing before the rules allowed it.
extension Database {
    /// A realtime request being monitored: who sent it, and when it began.
    struct Monitored {
        let client: OperationRecord.Client
        let started = OperationRecord.now()

        init(session: ServerSession, identity: Identity) {
            client = session.client(as: identity)
        }

        var micros: Int { OperationRecord.micros(since: started) }
    }

    /// A write's answer, wrapped to tell the monitors of it first: how long it took (until
    /// durable), the bytes of its data and whether the rules allowed it. Other requests are
    /// told where they are answered (`note`), or not at all (credentials, onDisconnect).
    func monitored(_ request: Request, _ monitored: Monitored, reply: @escaping @Sendable (Response) -> Void) -> @Sendable (Response) -> Void {
        let kind: OperationRecord.Kind
        let path: Path
        let bytes: Int
        switch request {
        case let .put(at, data, hash):
            (kind, path, bytes) = (hash == nil ? .realtimeWrite : .realtimeTransaction, at, jsonLength(data))
        case let .merge(at, updates, _):
            (kind, path, bytes) = (.realtimeUpdate, at, jsonLength(Node.empty.merging(updates.map { ($0.path, $0.value) })))
        default:
            return reply
        }
        let feed = operations, clock = self.clock
        return { response in
            feed.publish(OperationRecord(kind: kind, path: path, timestamp: clock(), micros: monitored.micros, bytes: bytes,
                                         client: monitored.client, allowed: response.status != .permissionDenied))
            reply(response)
        }
    }

    /// A read, listen or unlisten answered now, when monitored, having sent `bytes`.
    func note(_ monitored: Monitored?, _ kind: OperationRecord.Kind, _ path: Path, _ query: QueryParams?, allowed: Bool?, bytes: Int = 0) {
        guard let monitored else { return }
        let unindexed = allowed == true && kind != .unlisten && unindexed(query, at: path)
        operations.publish(OperationRecord(kind: kind, path: path, query: query, timestamp: clock(), micros: monitored.micros,
                                           bytes: bytes, client: monitored.client, allowed: allowed,
                                           unindexed: unindexed))
    }

    /// The length of `node`'s JSON, written into a buffer kept for it (measuring allocates
    /// nothing).
    func jsonLength(_ node: Node) -> Int {
        monitorScratch.removeAll(keepingCapacity: true)
        JSONWriter.write(node, to: &monitorScratch)
        let length = monitorScratch.count
        // A large value's room is not kept for the small ones after it.
        if monitorScratch.capacity > 1 << 20 { monitorScratch = [] }
        return length
    }

    /// The pushes one write sent: to how many connections, and their data's bytes.
    struct Broadcast {
        private var sessions = Set<ObjectIdentifier>()
        private(set) var bytes = 0
        let started = OperationRecord.now()

        var clients: Int { sessions.count }

        /// A push of `bytes` to `session`.
        mutating func count(_ bytes: Int, to session: ListenSink) {
            sessions.insert(ObjectIdentifier(session))
            self.bytes += bytes
        }
    }

    /// The length of a push's data (a merge's as one object).
    func pushLength(_ push: Push) -> Int {
        switch push {
        case let .data(_, data, _): return jsonLength(data)
        case let .merge(_, updates, _): return jsonLength(Node.empty.merging(updates.map { ($0.path, $0.value) }))
        default: return 0
        }
    }

    /// `listener-broadcast` at the deepest path every set of `record` lies under.
    func publish(_ broadcast: Broadcast, of record: LogRecord) {
        guard broadcast.clients > 0, var common = record.sets.first?.path else { return }
        for (path, _) in record.sets.dropFirst() {
            while !common.contains(path) { common = common.parent ?? .root }
        }
        operations.publish(OperationRecord(kind: .broadcast, path: common, timestamp: clock(), micros: OperationRecord.micros(since: broadcast.started), bytes: broadcast.bytes,
                                           client: nil, clientsUpdated: broadcast.clients))
    }

    /// Whether `query` at `path` is one the rules give no `.indexOn` for (a REST read, for
    /// its monitors). Not from the database's own queue.
    public nonisolated func isUnindexed(_ query: QueryParams?, at path: Path) -> Bool {
        runAndWait { $0.unindexed(query, at: path) }
    }
}
