import Foundation
import NIOPosix
import RTDBClient
import RTDBEngine
import RTDBData
import RTDBProtocol
import RTDBRules
import RTDBServer
import RTDBTransport
import Synchronization

/// An embedded database's folder, shared by the rtdb processes opened on it.
///
/// The process holding the folder's lock (the single source of truth) owns the database and
/// serves it to the others on a Unix socket inside the folder (mode 0600), with the realtime
/// protocol `rtdb serve` speaks; the others connect there. When the owner exits or dies, the
/// others' connections drop and each connects again: the first to take the lock becomes the
/// owner, the rest reach it on its socket. A write the old owner acknowledged is in its log;
/// one it did not is sent again by the client core on the new connection, named by its
/// origin (`WriteOrigin`), and the new owner applies it only if the log does not say it was:
/// each write is applied exactly once.
final class SharedFolder: Sendable {
    let folder: String
    let socketPath: String
    private struct State {
        var database: Database?
        var server: NetworkServer?
        /// Why the folder is not what it should be: not served to others, or not taken over.
        var problem: String?
        /// For connections through another process's socket; made when first needed.
        var group: MultiThreadedEventLoopGroup?
        /// The pid the folder's lock named when this process last found it taken.
        var holder: String?
    }
    private let state = Mutex(State())
    /// How long an owner runs before it serves the others: a one-shot command (`rtdb get
    /// /a`) is over by then and pays nothing for a server; a process that starts meanwhile
    /// finds no socket yet and tries again shortly, as after a handover.
    static let serveAfter: TimeInterval = 0.1

    init(folder: String) {
        self.folder = folder
        socketPath = folder + "/socket"
    }

    /// The pid the folder's lock named when this process last found it taken.
    var holder: String? { state.withLock { $0.holder } }

    /// Whether this process owns the folder now.
    var isOwner: Bool { state.withLock { $0.database != nil } }

    /// The folder, and how this process reaches it when not directly (for `status`).
    var description: String {
        state.withLock { state in
            if state.database != nil { return folder + (state.problem.map { " (not shared with other rtdb processes: \($0))" } ?? "") }
            return folder + " (shared: another rtdb process has it open" + (state.problem.map { "; taking it over failed: \($0)" } ?? "") + ")"
        }
    }

    /// Takes the folder if its lock is free; false when another process holds it. Other
    /// failures (a damaged log, a folder that cannot be made) are thrown.
    @discardableResult
    func takeOverIfFree() throws -> Bool {
        let opened: Database? = try state.withLock { state in
            if state.database != nil { return nil }
            do {
                state.database = try Database(folder: folder)
            } catch StoreError.folderInUse(_, let pid) {
                state.holder = pid
            }
            return state.database
        }
        guard let opened else { return state.withLock { $0.database != nil } }
        DispatchQueue.global().asyncAfter(deadline: .now() + SharedFolder.serveAfter) { [weak self] in
            guard let self else { return }
            state.withLock { state in
                if state.database === opened && state.server == nil { serve(opened, &state) }
            }
        }
        return true
    }

    /// Listens on the folder's socket; a socket left by an owner that died is replaced (the
    /// lock says nobody serves it). Without one (a path too long for a socket), this process
    /// still owns the folder, and the others are told it is in use.
    private func serve(_ database: Database, _ state: inout State) {
        unlink(socketPath)
        let server = NetworkServer(namespaces: Namespaces(serving: database), threads: 1, log: { _ in })
        do {
            // The folder is the owner's alone (0700); the socket too.
            try server.start(unixSocket: socketPath)
            chmod(socketPath, 0o600)
            state.server = server
        } catch {
            server.shutdown()
            state.problem = unservable ?? "no socket at \(socketPath): \(error)"
        }
    }

    /// A Unix socket's path holds 107 bytes (and a terminating zero).
    var socketPathTooLong: Bool { socketPath.utf8.count >= 108 }

    /// Why no owner can serve this folder to other processes, when that can be seen from any
    /// of them: a socket path too long, or something that is not a socket where it goes.
    var unservable: String? {
        if socketPathTooLong {
            return "the path of \(socketPath) is too long for a Unix socket (107 bytes at most)"
        }
        var status = stat()
        if lstat(socketPath, &status) == 0 && status.st_mode & S_IFMT != S_IFSOCK {
            return "\(socketPath) is not a socket (remove it)"
        }
        return nil
    }

    /// A connection to the database: in-process when this process owns the folder (taking
    /// it over if it is free), otherwise through the owner's socket.
    func connect() -> Transport {
        let owner: Bool
        do {
            owner = try takeOverIfFree()
        } catch {
            // The socket is tried all the same (another process may have it by now).
            state.withLock { $0.problem = "\(error)" }
            owner = false
        }
        if owner, let database = state.withLock({ $0.database }) {
            let (client, server) = InProcessTransport.pair()
            database.accept(server)
            return client
        }
        return WebSocketClientTransport(address: .socket(socketPath), group: group)
    }

    /// For connections through another process's socket; made when first needed.
    private var group: MultiThreadedEventLoopGroup {
        state.withLock { state in
            if let group = state.group { return group }
            let made = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            state.group = made
            return made
        }
    }

    /// What the rules say of `question` on the folder's data: asked of the database here when
    /// this process owns the folder, else of its owner, on the socket (as `rtdb serve`'s
    /// owner asks one).
    func answer(_ question: RuleQuestion, timeout: TimeInterval) async throws -> RuleAnswer {
        var rules: SecurityRules?
        if let text = question.rules { rules = try SecurityRules(parsing: text) }
        if let database = state.withLock({ $0.database }) { return try database.answer(question, rules: rules) }
        let reply = try await HTTPClient.send("POST", host: "localhost", port: 80, unixSocket: socketPath, target: "/.settings/rules/check.json",
                                              headers: [("Content-Type", "application/json")], body: question.body, tls: nil, group: group,
                                              timeout: timeout)
        let json = try? JSONValue.parse(reply.text)
        guard reply.status == 200, let json, let answer = RuleAnswer(json: json) else {
            throw StoreError.failed("the rtdb process that has \(folder) could not check the rules: \(json?["error"]?.string ?? "HTTP \(reply.status)")")
        }
        return answer
    }

    /// The database, while this process owns the folder.
    var ownedDatabase: Database? { state.withLock { $0.database } }

    /// The snapshot endpoints of the folder's owner, on its socket (when this process is not
    /// the owner).
    func ownerSnapshots(timeout: TimeInterval) -> SnapshotEndpoints {
        SnapshotEndpoints(server: "the rtdb process that has \(folder)") { [self] method, path, slow in
            try await HTTPClient.send(method, host: "localhost", port: 80, unixSocket: socketPath, target: path, tls: nil, group: group,
                                      timeout: slow ? SnapshotEndpoints.saveTimeout : timeout)
        }
    }

    /// How the owner's database answers a read, asked on its socket (when this process is not
    /// the owner).
    func ownerExplanation(_ path: Path, _ query: QueryParams?, timeout: TimeInterval) async throws -> QueryExplanation {
        let answer = try await HTTPClient.send("GET", host: "localhost", port: 80, unixSocket: socketPath, target: ExplainEndpoint.target(path, query),
                                               tls: nil, group: group, timeout: timeout)
        return try ExplainEndpoint.explanation(answer, server: "the rtdb process that has \(folder)")
    }

    /// The owner's profiler stream, on its socket (when this process is not the owner).
    func ownerProfile(timeout: TimeInterval) async throws -> AsyncThrowingStream<EventStreamClient.Event, Error> {
        try await EventStreamClient.open(host: "localhost", port: 80, unixSocket: socketPath, target: "/.settings/profile.json",
                                         tls: nil, group: group, timeout: timeout)
    }

    /// Stops serving (the others take over) and closes the database: every write durable.
    func close() {
        let (server, database, group) = state.withLock { state in
            defer {
                state.server = nil
                state.database = nil
                state.group = nil
            }
            return (state.server, state.database, state.group)
        }
        if let server {
            // Before the lock is released: the next owner's socket must not be removed.
            unlink(socketPath)
            server.shutdown()
        }
        database?.close()
        try? group?.syncShutdownGracefully()
    }
}
