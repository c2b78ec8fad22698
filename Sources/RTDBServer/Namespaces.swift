import Foundation
import RTDBData
import RTDBEngine
import RTDBRules

/// The databases of one server, one per namespace, each in its own folder under the data
/// folder. A database is opened on first use and closed again once nobody has used it for
/// `idleClose`; a read of a namespace that has no folder opens nothing and creates nothing.
///
/// `@unchecked Sendable`: the table of open databases is guarded by `lock`.
public final class Namespaces: @unchecked Sendable {
    public let folder: String
    /// How long a database stays open with no connection, stream or request using it.
    public var idleClose: TimeInterval = 60
    private let lock = NSLock()
    // Guarded by `lock`.
    private var open: [String: Entry] = [:]
    /// Namespaces being closed (a new user waits for the folder to be released) or opened
    /// (a second user waits for the first to finish): opening reads the whole log, so it is
    /// done outside `lock`, and other namespaces are not held up.
    private var closing: [String: DispatchGroup] = [:]
    private var opening: [String: DispatchGroup] = [:]
    /// Set by `closeAll`: nothing opens after it.
    private var shutDown = false
    private var sweeper: DispatchSourceTimer?
    /// The rules every namespace starts with (`rtdb serve --rules`), and those replaced while
    /// the server runs (kept for its lifetime, as the emulator keeps them; guarded by `lock`).
    private let initialRules: SecurityRules
    private var replacedRules: [String: SecurityRules] = [:]

    private final class Entry {
        let database: Database
        var users = 0
        var lastUsed = Date()
        init(_ database: Database) { self.database = database }
    }

    /// The one database every namespace names, when serving an embedded database's folder
    /// to the other processes on it; its owner opens and closes it.
    private let fixed: Database?

    public init(folder: String, rules: SecurityRules = .open) throws {
        self.folder = folder
        fixed = nil
        initialRules = rules
        try FileIO.makeDirectories(folder)
    }

    public init(serving database: Database) {
        folder = ""
        fixed = database
        initialRules = .open
    }

    /// The rules in force for `name`.
    public func rules(for name: String) -> SecurityRules {
        if let fixed { return fixed.securityRules }
        lock.lock()
        defer { lock.unlock() }
        return replacedRules[name] ?? initialRules
    }

    /// Replaces the rules of `name`, open or not; its listens the new rules refuse are cancelled.
    public func setRules(_ rules: SecurityRules, for name: String) {
        if let fixed { return fixed.replaceRules(rules) }
        // Under the lock, so two replacements reach the open database in the order kept.
        lock.lock()
        replacedRules[name] = rules
        open[name]?.database.replaceRules(rules)
        lock.unlock()
    }

    /// Namespace names as Firebase allows them: letters, digits and dashes (underscores too).
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
        }
    }

    /// The database of `name`, counted as in use until `release(name)`. Without `create`, a
    /// namespace that has no folder yet gives nil (it holds nothing) and nothing is made.
    public func acquire(_ name: String, create: Bool = true) throws -> Database? {
        guard Namespaces.isValid(name) else {
            throw StoreError.failed("invalid namespace \"\(name)\": use letters, digits, \"-\" and \"_\"")
        }
        if let fixed { return fixed }
        lock.lock()
        while let group = closing[name] ?? opening[name] {
            lock.unlock()
            group.wait()
            lock.lock()
        }
        if shutDown {
            lock.unlock()
            throw StoreError.failed("the server is shutting down")
        }
        if let entry = open[name] {
            entry.users += 1
            entry.lastUsed = Date()
            lock.unlock()
            return entry.database
        }
        let path = folder + "/" + name
        if !create && !FileManager.default.fileExists(atPath: path) {
            lock.unlock()
            return nil
        }
        let group = DispatchGroup()
        group.enter()
        opening[name] = group
        lock.unlock()
        defer { group.leave() }
        let opened = Result { try Database(folder: path) }
        lock.lock()
        opening[name] = nil
        if case .success(let database) = opened {
            database.replaceRules(replacedRules[name] ?? initialRules)
            let entry = Entry(database)
            entry.users = 1
            open[name] = entry
            startSweeping()
        }
        lock.unlock()
        return try opened.get()
    }

    /// One user of `name` is done with it.
    public func release(_ name: String) {
        if fixed != nil { return }
        lock.lock()
        if let entry = open[name] {
            entry.users -= 1
            entry.lastUsed = Date()
        }
        lock.unlock()
    }

    /// How many databases are open (for tests and the server's log).
    public var openCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return open.count
    }

    /// Closes databases nobody has used for `idleClose`: their writes are durable, their
    /// folders unlocked, their memory freed.
    public func closeIdle(now: Date = Date()) {
        lock.lock()
        let idle = open.filter { $0.value.users <= 0 && now.timeIntervalSince($0.value.lastUsed) >= idleClose }
        var groups: [String: DispatchGroup] = [:]
        for name in idle.keys {
            open[name] = nil
            let group = DispatchGroup()
            group.enter()
            closing[name] = group
            groups[name] = group
        }
        lock.unlock()
        for (name, entry) in idle {
            entry.database.close()
            lock.lock()
            closing[name] = nil
            lock.unlock()
            groups[name]?.leave()
        }
    }

    private func startSweeping() {
        guard sweeper == nil, !shutDown else { return }
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        let interval = max(1, idleClose / 4)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.closeIdle() }
        timer.resume()
        sweeper = timer
    }

    /// What a client is told when a namespace cannot be opened: the reason without the
    /// server's file names (those go to the server's log).
    static func clientMessage(for error: Error, namespace: String) -> String {
        switch error as? StoreError {
        case .failed(let message)?: return message
        case .corrupt?: return "the database \"\(namespace)\" is damaged and cannot be opened; the server's log says where (rtdb serve --recover salvages it)"
        case .unsalvageable?: return "the database \"\(namespace)\" is damaged and cannot be opened or salvaged; the server's log says where"
        default: return "the database \"\(namespace)\" cannot be opened; the server's log says why"
        }
    }

    /// Makes every write durable and releases every folder; namespaces being opened are
    /// waited for and closed too, and none opens after.
    /// Every open database runs what it has received and answers its writes once durable
    /// (`Database.settle`).
    public func settleAll() {
        lock.lock()
        let all = fixed.map { [$0] } ?? open.values.map(\.database)
        lock.unlock()
        for database in all { database.settle() }
    }

    public func closeAll() {
        lock.lock()
        shutDown = true
        sweeper?.cancel()
        sweeper = nil
        let waits = Array(opening.values) + Array(closing.values)
        lock.unlock()
        for group in waits { group.wait() }
        lock.lock()
        let all = open.values.map(\.database)
        open = [:]
        lock.unlock()
        for db in all { db.close() }
    }
}
