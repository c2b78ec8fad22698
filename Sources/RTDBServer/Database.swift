import Foundation
import RTDBData
import RTDBProtocol

/// The server engine for one database: the live tree, its durable store, and the requests of
/// every connection, processed one at a time on a serial queue.
///
/// A write is applied to the tree at once (later requests see it) and acknowledged only when
/// its log record is durable. A multi-path update is one record: all of it or none of it.
public final class Database: @unchecked Sendable {
    let queue = DispatchQueue(label: "rtdb.database")
    private var root: Node
    private let store: Store
    /// Milliseconds since the epoch; replaceable in tests.
    var clock: () -> Double = { (Date().timeIntervalSince1970 * 1000).rounded() }

    public init(folder: String) throws {
        store = try Store(folder: folder)
        root = store.recoveredRoot
    }

    public var folder: String { store.folder }

    /// Attaches the server end of a connection; the session lives as long as the transport.
    @discardableResult
    public func accept(_ transport: Transport, host: String = "embedded") -> ServerSession {
        let session = ServerSession(database: self, transport: transport)
        session.start(host: host)
        return session
    }

    /// Waits for queued work, makes every write durable and releases the data folder.
    public func close() {
        queue.sync {}
        store.close()
    }

    /// The current value at `path` (for tests and tools).
    public func value(at path: Path) -> Node {
        queue.sync { root.child(at: path) }
    }

    // MARK: Requests (on `queue`)

    func handle(_ request: Request, reply: @escaping (Response) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        switch request {
        case .get(let path):
            if let error = Database.checkPath(path, writing: false) { return reply(error) }
            reply(Response(status: "ok", data: root.child(at: path)))
        case let .put(path, data, hash):
            if let error = Database.checkPath(path, writing: true, priorityLast: true) { return reply(error) }
            if let hash, hash != root.child(at: path).hashString {
                return reply(.error("datastale", "the data at \(path) changed since it was read"))
            }
            let value = data.containsServerValues ? data.resolvingServerValues(now: clock(), existing: root.child(at: path)) : data
            commit(LogRecord(sets: [(path, value)]), reply: reply)
        case let .merge(path, updates):
            if let error = Database.checkPath(path, writing: true) { return reply(error) }
            var sets: [(Path, Node)] = []
            let now = clock()
            for update in updates {
                let full = path.appending(update.path)
                if let error = Database.checkPath(full, writing: true, priorityLast: true) { return reply(error) }
                let value = update.value
                sets.append((full, value.containsServerValues ? value.resolvingServerValues(now: now, existing: root.child(at: full)) : value))
            }
            do {
                try validateUpdatePaths(updates.map { ($0.path, $0.value) }, base: path)
            } catch {
                return reply(.error("invalid_data", "\(error)"))
            }
            if sets.isEmpty { return reply(.ok) }
            commit(LogRecord(sets: sets), reply: reply)
        case .stats:
            reply(.ok)
        }
    }

    private func commit(_ record: LogRecord, reply: @escaping (Response) -> Void) {
        root = record.apply(to: root)
        store.append(record, root: root) { error in
            if let error {
                reply(.error("write_failed", "the write could not be made durable: \(error)"))
            } else {
                reply(.ok)
            }
        }
    }

    static func checkPath(_ path: Path, writing: Bool, priorityLast: Bool = false) -> Response? {
        do {
            if writing && path.isInfo { throw DataError.readOnlyPath(path.description) }
            for (i, key) in path.keys.enumerated() {
                if i == 0 && key == ".info" { continue }
                if priorityLast && key == ".priority" && i == path.count - 1 { continue }
                try Path.validate(key: key, in: path.description)
            }
            try path.validateSize()
            return nil
        } catch {
            return .error("invalid_path", "\(error)")
        }
    }
}
