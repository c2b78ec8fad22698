import Foundation
import RTDBClient
import RTDBProtocol
import RTDBEngine
import RTDBShell
import RTDBData
import RTDBRules

/// Embedded mode: the server engine in this process, behind an in-process connection that
/// carries the same protocol messages a socket would; or, when another rtdb process has the
/// folder, that process's engine through its socket (`SharedFolder`), until this one takes
/// the folder over.
final class EmbeddedDatabase: DatabaseConnection, RulesChecking, SnapshotKeeping, OperationMonitoring, QueryExplaining {
    let repo: Repo
    /// The folder; while another process has it, also that this one goes through it.
    var location: String { shared.description }
    let credential = "none needed (embedded: full access)"
    private let shared: SharedFolder

    /// Opens the folder, or connects to the process that has it (waiting at most `timeout`
    /// for it to answer).
    init(folder: String, timeout: TimeInterval = 10) async throws {
        let shared = SharedFolder(folder: folder)
        self.shared = shared
        let owner = try shared.takeOverIfFree()
        // A new connection each time the client connects: after `offline`, `online` connects
        // again; a connection through another process's socket drops when that process exits,
        // and the next one may be in-process, this process having taken the folder over.
        repo = Repo(connector: { _, _ in shared.connect() }, reconnect: ReconnectPolicy(minDelay: 0.05, maxDelay: 1))
        // The owner serves a moment after it starts, and a handover takes a moment too: the
        // connection is retried until then, so the first failure does not count. A socket
        // path too long for any owner to serve is not waited for.
        var reached = owner
        if !owner && !shared.socketPathTooLong { reached = (try? await repo.connected(within: timeout)) ?? false }
        if !reached {
            await close()
            let which = shared.unservable.map { "which cannot share it: \($0)" } ?? "which does not answer on \(shared.socketPath)"
            throw StoreError.failed("the data folder \(folder) is in use by another rtdb process\(shared.holder.map { " (pid \($0))" } ?? ""), \(which); stop it or choose another folder with --data")
        }
    }

    func close() async {
        await repo.close()
        shared.close()
    }

    /// An embedded database has no rules: its owner does as it likes.
    let hasRules = false

    func checkRules(_ question: RuleQuestion) async throws -> RuleAnswer {
        try await shared.answer(question, timeout: 10)
    }

    // MARK: SnapshotKeeping: by the database here when this process owns the folder, else
    // by its owner, on the socket.

    func snapshots() async throws -> [SnapshotInfo] {
        if let database = shared.ownedDatabase { return try database.snapshots() }
        return try await shared.ownerSnapshots(timeout: 10).list()
    }

    func saveSnapshot(_ name: String) async throws -> SnapshotInfo {
        if let database = shared.ownedDatabase {
            return try await withCheckedThrowingContinuation { done in database.saveSnapshot(name) { done.resume(with: $0) } }
        }
        return try await shared.ownerSnapshots(timeout: 10).save(name)
    }

    func restoreSnapshot(_ name: String) async throws {
        if let database = shared.ownedDatabase {
            let response = await withCheckedContinuation { done in database.restoreSnapshot(name) { done.resume(returning: $0) } }
            guard response.isOK else { throw StoreError.failed(response.message) }
            return
        }
        try await shared.ownerSnapshots(timeout: 10).restore(name)
    }

    func removeSnapshot(_ name: String) async throws -> Bool {
        if let database = shared.ownedDatabase { return try database.removeSnapshot(name) }
        return try await shared.ownerSnapshots(timeout: 10).remove(name)
    }

    /// How the folder's database answers a read: asked of it here when this process owns the
    /// folder, else of its owner, on the socket.
    func explain(_ path: Path, query: QueryParams?) async throws -> QueryExplanation {
        if let database = shared.ownedDatabase {
            let result = await withCheckedContinuation { done in database.explain(path, query: query) { done.resume(returning: $0) } }
            switch result {
            case .success(let explanation): return explanation
            case .failure(let refused): throw StoreError.failed(refused.response.message)
            }
        }
        return try await shared.ownerExplanation(path, query, timeout: 10)
    }

    /// Every operation on the folder's database: from its feed when this process owns the
    /// folder, else from the owner's profiler stream on its socket.
    func operations() async throws -> AsyncThrowingStream<MonitorEvent, Error> {
        if let database = shared.ownedDatabase { return ProfileEvents.from(database.operations) }
        return ProfileEvents.from(try await shared.ownerProfile(timeout: 10))
    }

    /// `$XDG_DATA_HOME/rtdb/server`, or `~/.local/share/rtdb/server`: one folder per namespace.
    static var defaultServerFolder: String {
        (defaultFolder as NSString).deletingLastPathComponent + "/server"
    }

    /// `$XDG_DATA_HOME/rtdb/default`, or `~/.local/share/rtdb/default`.
    static var defaultFolder: String {
        (ProcessEnvironment.nonEmpty("XDG_DATA_HOME") ?? ProcessEnvironment.home + "/.local/share") + "/rtdb/default"
    }
}
