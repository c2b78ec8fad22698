import Dispatch
import RTDBData
import RTDBProtocol
import RTDBRules

/// What the database tells its monitors (`operations`): each realtime request as it is
/// answered, each write's broadcast to the listens it changed, each connection's start and
/// end (`ServerSession`), and the REST requests their router reports. Nothing is measured
/// while no monitor watches.
extension Database {
    /// A realtime request's answer, wrapped to tell the monitors of it first: what it was,
    /// how long it took (a write's until durable), the bytes it carried and whether the rules
    /// allowed it. Requests the profiler does not name (credentials, onDisconnect) are not told.
    func monitored(_ request: Request, from session: ServerSession, as identity: Identity,
                   reply: @escaping @Sendable (Response) -> Void) -> @Sendable (Response) -> Void {
        let kind: OperationRecord.Kind
        let path: Path
        var query: QueryParams?
        var bytes = 0
        var unindexed = false
        switch request {
        case let .put(at, data, hash):
            (kind, path, bytes) = (hash == nil ? .realtimeWrite : .realtimeTransaction, at, jsonLength(data))
        case let .merge(at, updates):
            (kind, path) = (.realtimeUpdate, at)
            bytes = jsonLength(Node.empty.merging(updates.map { ($0.path, $0.value) }))
        case let .get(at, filter):
            (kind, path, query) = (.realtimeRead, at, filter)
            unindexed = self.unindexed(filter, at: at)
        case let .listen(at, filter, _, _):
            (kind, path, query) = (.listen, at, filter)
            unindexed = self.unindexed(filter, at: at)
            // What the listen is sent first, were it allowed (a refusal sends nothing).
            if Database.checkPath(at, writing: false) == nil { bytes = jsonLength(evaluate(at, query: filter)) }
        case let .unlisten(at, filter, _):
            (kind, path, query) = (.unlisten, at, filter)
        default:
            return reply
        }
        let client = session.client(as: identity)
        let feed = operations, clock = self.clock
        let (carriedIn, filter, unindexedQuery) = (bytes, query, unindexed)
        let started = DispatchTime.now().uptimeNanoseconds
        return { response in
            let micros = Int((DispatchTime.now().uptimeNanoseconds &- started) / 1000)
            let allowed = response.status != .permissionDenied
            var carried = carriedIn
            if kind == .realtimeRead { carried = response.isOK ? JSONWriter.bytes(response.data).count : 0 }
            if kind == .listen && !response.isOK { carried = 0 }
            feed.publish(OperationRecord(kind: kind, path: path, query: filter, timestamp: clock(), micros: micros, bytes: carried,
                                         client: client, allowed: kind == .unlisten ? nil : allowed,
                                         unindexed: unindexedQuery))
            reply(response)
        }
    }

    /// The length of `node`'s JSON, written into a buffer kept for it (a monitored write
    /// allocates nothing for it).
    private func jsonLength(_ node: Node) -> Int {
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
        let started = DispatchTime.now().uptimeNanoseconds

        var clients: Int { sessions.count }

        mutating func count(_ push: Push, to session: ListenSink) {
            sessions.insert(ObjectIdentifier(session))
            switch push {
            case let .data(_, data, _): bytes += JSONWriter.bytes(data).count
            case let .merge(_, updates, _): bytes += JSONWriter.bytes(Node.empty.merging(updates.map { ($0.path, $0.value) })).count
            default: break
            }
        }
    }

    /// `listener-broadcast` at the deepest path every set of `record` lies under.
    func publish(_ broadcast: Broadcast, of record: LogRecord) {
        guard broadcast.clients > 0, var common = record.sets.first?.path else { return }
        for (path, _) in record.sets.dropFirst() {
            while !common.contains(path) { common = common.parent ?? .root }
        }
        let micros = Int((DispatchTime.now().uptimeNanoseconds &- broadcast.started) / 1000)
        operations.publish(OperationRecord(kind: .broadcast, path: common, timestamp: clock(), micros: micros, bytes: broadcast.bytes,
                                           client: nil, clientsUpdated: broadcast.clients))
    }

    /// Whether `query` at `path` is one the rules give no `.indexOn` for (a REST read, for
    /// its monitors). Not from the database's own queue.
    public nonisolated func isUnindexed(_ query: QueryParams?, at path: Path) -> Bool {
        runAndWait { $0.unindexed(query, at: path) }
    }
}
