import Foundation
import RTDBData
import RTDBProtocol

/// The client core: the one owner of a connection's state. Every call hops onto a serial
/// queue; completions are called on that queue.
///
/// This first slice reads from the server and sends writes with acks; the local cache and
/// events come with the sync tree.
public final class Repo: @unchecked Sendable {
    let queue = DispatchQueue(label: "rtdb.repo")
    private let connection: PersistentConnection
    private var pushIDs = PushIDGenerator()
    private var pendingWrites = 0
    private var waiters = 0
    private let idle = NSCondition()

    public init(transport: Transport) {
        connection = PersistentConnection(transport: transport, queue: queue)
        queue.sync { connection.start() }
    }

    // MARK: Reads

    /// Reads the value at `path` from the server; `.info` is answered locally.
    public func get(_ path: Path, completion: @escaping (Result<Node, DatabaseError>) -> Void) {
        queue.async { [self] in
            if path.isInfo { return completion(.success(infoNode().child(at: path.dropFirst()))) }
            connection.send(.get(path: path)) { response in
                completion(response.isOK ? .success(response.data) : .failure(DatabaseError(status: response.status, message: response.message)))
            }
        }
    }

    private func infoNode() -> Node {
        Node.empty
            .setting(Path("connected"), to: Node(connection.connected))
            .setting(Path("serverTimeOffset"), to: Node(connection.serverTimeOffset.rounded()))
    }

    public var isConnected: Bool { queue.sync { connection.connected } }
    public var serverTimeOffset: Double { queue.sync { connection.serverTimeOffset } }

    // MARK: Writes

    public func set(_ path: Path, _ value: Node, completion: @escaping (Result<Void, DatabaseError>) -> Void = { _ in }) {
        write(.put(path: path, data: value, hash: nil), completion: completion)
    }

    public func update(_ path: Path, _ updates: [Update], completion: @escaping (Result<Void, DatabaseError>) -> Void = { _ in }) {
        if updates.isEmpty { return queue.async { completion(.success(())) } }
        write(.merge(path: path, data: updates), completion: completion)
    }

    public func setPriority(_ path: Path, _ priority: LeafValue?, completion: @escaping (Result<Void, DatabaseError>) -> Void = { _ in }) {
        let value = priority.map { Node($0) } ?? .empty
        write(.put(path: path.child(".priority"), data: value, hash: nil), completion: completion)
    }

    /// Writes `value` under a new chronological key and returns the key at once.
    @discardableResult
    public func push(_ path: Path, _ value: Node, completion: @escaping (Result<Void, DatabaseError>) -> Void = { _ in }) -> String {
        let key = queue.sync { () -> String in
            let now = Date().timeIntervalSince1970 * 1000 + connection.serverTimeOffset
            return pushIDs.next(now: Int64(now))
        }
        if !value.isEmpty { set(path.child(key), value, completion: completion) } else { queue.async { completion(.success(())) } }
        return key
    }

    private func write(_ request: Request, completion: @escaping (Result<Void, DatabaseError>) -> Void) {
        idle.lock()
        pendingWrites += 1
        idle.unlock()
        queue.async { [self] in
            connection.send(request) { [self] response in
                finishWrite()
                completion(response.isOK ? .success(()) : .failure(DatabaseError(status: response.status, message: response.message)))
            }
        }
    }

    private func finishWrite() {
        idle.lock()
        pendingWrites -= 1
        if waiters > 0 { idle.broadcast() }
        idle.unlock()
    }

    /// Writes sent but not yet acknowledged.
    public var pendingWriteCount: Int {
        idle.lock()
        defer { idle.unlock() }
        return pendingWrites
    }

    /// Blocks until every write made so far is acknowledged or rejected, or `timeout` passes.
    /// Returns the number still unacknowledged.
    @discardableResult
    public func waitForPendingWrites(timeout: TimeInterval) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        idle.lock()
        defer { idle.unlock() }
        waiters += 1
        while pendingWrites > 0 {
            if !idle.wait(until: deadline) { break }
        }
        waiters -= 1
        return pendingWrites
    }

    public func close() {
        queue.sync { connection.close() }
    }
}
