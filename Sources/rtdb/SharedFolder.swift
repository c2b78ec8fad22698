import Foundation
import NIOPosix
import RTDBClient
import RTDBEngine
import RTDBProtocol
import RTDBServer
import RTDBTransport

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
///
/// `@unchecked Sendable`: its state is guarded by `lock`.
final class SharedFolder: @unchecked Sendable {
    let folder: String
    let socketPath: String
    private let lock = NSLock()
    private var database: Database?
    private var server: NetworkServer?
    /// Why the folder is not what it should be: not served to others, or not taken over.
    private var problem: String?
    /// For connections through another process's socket; made when first needed.
    private var group: MultiThreadedEventLoopGroup?
    /// How long an owner runs before it serves the others: a one-shot command (`rtdb get
    /// /a`) is over by then and pays nothing for a server; a process that starts meanwhile
    /// finds no socket yet and tries again shortly, as after a handover.
    static let serveAfter: TimeInterval = 0.1

    init(folder: String) {
        self.folder = folder
        socketPath = folder + "/socket"
    }

    /// The pid the folder's lock named when this process last found it taken.
    var holder: String? { lock.withLock { lastHolder } }
    private var lastHolder: String?

    /// Whether this process owns the folder now.
    var isOwner: Bool { lock.withLock { database != nil } }

    /// The folder, and how this process reaches it when not directly (for `status`).
    var description: String {
        lock.withLock {
            if database != nil { return folder + (problem.map { " (not shared with other rtdb processes: \($0))" } ?? "") }
            return folder + " (shared: another rtdb process has it open" + (problem.map { "; taking it over failed: \($0)" } ?? "") + ")"
        }
    }

    /// Takes the folder if its lock is free; false when another process holds it. Other
    /// failures (a damaged log, a folder that cannot be made) are thrown.
    @discardableResult
    func takeOverIfFree() throws -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if database != nil { return true }
        let opened: Database
        do {
            opened = try Database(folder: folder)
        } catch StoreError.folderInUse(_, let pid) {
            lastHolder = pid
            return false
        }
        database = opened
        DispatchQueue.global().asyncAfter(deadline: .now() + SharedFolder.serveAfter) { [weak self] in
            guard let self else { return }
            self.lock.withLock { if self.database === opened && self.server == nil { self.serve(opened) } }
        }
        return true
    }

    /// Listens on the folder's socket; a socket left by an owner that died is replaced (the
    /// lock says nobody serves it). Without one (a path too long for a socket), this process
    /// still owns the folder, and the others are told it is in use.
    private func serve(_ database: Database) {
        unlink(socketPath)
        let server = NetworkServer(namespaces: Namespaces(serving: database), threads: 1, log: { _ in })
        do {
            // The folder is the owner's alone (0700); the socket too.
            try server.start(unixSocket: socketPath)
            chmod(socketPath, 0o600)
            self.server = server
        } catch {
            server.shutdown()
            problem = unservable ?? "no socket at \(socketPath): \(error)"
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
            lock.withLock { problem = "\(error)" }
            owner = false
        }
        if owner, let database = lock.withLock({ self.database }) {
            let (client, server) = InProcessTransport.pair()
            database.accept(server)
            return client
        }
        let group = lock.withLock {
            if let group = self.group { return group }
            let made = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            self.group = made
            return made
        }
        return WebSocketClientTransport(address: .socket(socketPath), group: group)
    }

    /// Stops serving (the others take over) and closes the database: every write durable.
    func close() {
        lock.lock()
        let server = self.server, database = self.database, group = self.group
        self.server = nil
        self.database = nil
        self.group = nil
        lock.unlock()
        if let server {
            // Before the lock is released: the next owner's socket must not be removed.
            unlink(socketPath)
            server.shutdown()
        }
        database?.close()
        try? group?.syncShutdownGracefully()
    }
}
