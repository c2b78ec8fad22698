import Foundation
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBRules
import Synchronization

/// The databases of one server, one per namespace, each in its own folder under the data
/// folder. A database is opened on first use and closed again once nobody has used it for
/// `idleClose`; a read of a namespace that has no folder opens nothing and creates nothing.
public final class Namespaces: Sendable {
    public let folder: String
    /// How long a database stays open with no connection, stream or request using it.
    public let idleClose: TimeInterval

    private struct State {
        var open: [String: Entry] = [:]
        /// Namespaces being closed (a new user waits for the folder to be released) or opened
        /// (a second user waits for the first to finish): opening reads the whole log, so it is
        /// done outside the lock, and other namespaces are not held up.
        var closing: [String: DispatchGroup] = [:]
        var opening: [String: DispatchGroup] = [:]
        /// Set by `closeAll`: nothing opens after it.
        var shutDown = false
        var sweeper: DispatchSourceTimer?
        /// Each namespace's rules, with the coverage of its requests: the server's until
        /// replaced while it runs (kept for its lifetime, as the emulator keeps them), counted
        /// apart from the first time the namespace opens.
        var rules: [String: SecurityRules] = [:]
        /// The terms the rules in `rules` count between them.
        var countedTerms = 0
    }

    private struct Entry {
        let database: Database
        var users = 0
        var lastUsed = Date()
    }

    private let state = Mutex(State())
    /// The rules every namespace starts with (`rtdb serve --rules`).
    private let initialRules: SecurityRules
    /// How each namespace tells of its rules' decisions.
    private let explanations: RuleExplanations

    /// The one database every namespace names, when serving an embedded database's folder
    /// to the other processes on it; its owner opens and closes it.
    private let fixed: Database?

    public init(folder: String, rules: SecurityRules = .open, idleClose: TimeInterval = 60,
                explanations: RuleExplanations = RuleExplanations()) throws {
        self.folder = folder
        self.idleClose = idleClose
        fixed = nil
        initialRules = rules
        self.explanations = explanations
        try FileIO.makeDirectories(folder)
    }

    public init(serving database: Database) {
        folder = ""
        idleClose = 60
        fixed = database
        initialRules = .open
        explanations = database.explanations
    }

    /// The rules in force for `name`: counting its requests once it has been opened or given
    /// rules, the server's (uncounted) before.
    public func rules(for name: String) -> SecurityRules {
        if let fixed { return fixed.securityRules }
        return state.withLock { $0.rules[name] } ?? initialRules
    }

    /// The terms the namespaces' coverage may count between them (each counted term holds a
    /// few dozen bytes once a request reaches it); past it, a namespace opened for the first
    /// time is judged by the server's rules uncounted.
    static let countedTermLimit = 1_000_000

    /// Under the lock: the rules of `name` as it opens, counting from now when they do not yet.
    private static func counting(_ name: String, _ state: inout State, initial: SecurityRules) -> SecurityRules {
        if let rules = state.rules[name] { return rules }
        guard state.countedTerms + initial.terms <= countedTermLimit else { return initial }
        let rules = initial.counting()
        state.rules[name] = rules
        state.countedTerms += rules.terms
        return rules
    }

    /// Replaces the rules of `name`, open or not; its listens the new rules refuse are
    /// cancelled, and its coverage counts afresh.
    public func setRules(_ rules: SecurityRules, for name: String) {
        if let fixed { return fixed.replaceRules(rules) }
        let counted = rules.counting()
        // Under the lock, so two replacements reach the open database in the order kept.
        state.withLock { state in
            state.countedTerms += counted.terms - (state.rules[name]?.terms ?? 0)
            state.rules[name] = counted
            state.open[name]?.database.replaceRules(counted)
        }
    }

    /// Whether the server may show anyone what its rules saw (traces, coverage): not when it
    /// listens beyond this machine.
    public var showsRuleValues: Bool { explanations.toClients }

    /// What the requests to `name` made of its rules since they were set.
    public func coverage(for name: String) -> RuleCoverageReport {
        RuleCoverageReport(rules(for: name))
    }


    /// The namespaces that exist (those with a folder, and those open), sorted, as the
    /// emulator's `/.inspect/databases.json` lists them; `requested` when every name is the
    /// one database being served.
    public func names(requested: String) -> [String] {
        if fixed != nil { return [requested] }
        let open = state.withLock { Array($0.open.keys) }
        return Set(open + Namespaces.stored(in: folder)).sorted()
    }

    /// The namespaces a server's data folder holds: its subfolders named as namespaces, sorted.
    public static func stored(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { name in
            var isFolder: ObjCBool = false
            return NamespaceName.isValid(name) && FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isFolder) && isFolder.boolValue
        }.sorted()
    }

    /// The database of `name`, counted as in use until `release(name)`. Without `create`, a
    /// namespace that has no folder yet gives nil (it holds nothing) and nothing is made.
    public func acquire(_ name: String, create: Bool = true) throws -> Database? {
        guard NamespaceName.isValid(name) else {
            throw StoreError.failed("invalid namespace \"\(name)\": use letters, digits, \"-\" and \"_\"")
        }
        if let fixed { return fixed }
        /// What the table says of `name`: open (or absent), being opened or closed by another
        /// user (wait and look again), or ours to open.
        enum Step { case found(Database?), wait(DispatchGroup), open(DispatchGroup) }
        let path = folder + "/" + name
        var ours: DispatchGroup?
        while ours == nil {
            let step: Step = try state.withLock { state in
                if let group = state.closing[name] ?? state.opening[name] { return .wait(group) }
                if state.shutDown { throw StoreError.failed("the server is shutting down") }
                if let entry = state.open[name] {
                    state.open[name]?.users += 1
                    state.open[name]?.lastUsed = Date()
                    return .found(entry.database)
                }
                if !create && !FileManager.default.fileExists(atPath: path) { return .found(nil) }
                let group = DispatchGroup()
                group.enter()
                state.opening[name] = group
                return .open(group)
            }
            switch step {
            case .found(let database): return database
            case .wait(let group): group.wait()
            case .open(let group): ours = group
            }
        }
        defer { ours?.leave() }
        let opened = Result { try Database(folder: path, explanations: explanations) }
        state.withLock { state in
            state.opening[name] = nil
            if case .success(let database) = opened {
                database.replaceRules(Self.counting(name, &state, initial: initialRules))
                state.open[name] = Entry(database: database, users: 1)
                startSweeping(&state)
            }
        }
        return try opened.get()
    }

    /// One user of `name` is done with it.
    public func release(_ name: String) {
        if fixed != nil { return }
        state.withLock { state in
            guard state.open[name] != nil else { return }
            state.open[name]?.users -= 1
            state.open[name]?.lastUsed = Date()
        }
    }

    /// How many databases are open (for tests and the server's log).
    public var openCount: Int {
        state.withLock { $0.open.count }
    }

    /// Closes databases nobody has used for `idleClose`: their writes are durable, their
    /// folders unlocked, their memory freed.
    public func closeIdle(now: Date = Date()) {
        let idle: [(name: String, database: Database, group: DispatchGroup)] = state.withLock { state in
            let idle = state.open.filter { $0.value.users <= 0 && now.timeIntervalSince($0.value.lastUsed) >= idleClose }
            return idle.map { name, entry in
                state.open[name] = nil
                let group = DispatchGroup()
                group.enter()
                state.closing[name] = group
                return (name, entry.database, group)
            }
        }
        for (name, database, group) in idle {
            database.close()
            state.withLock { _ = $0.closing.removeValue(forKey: name) }
            group.leave()
        }
    }

    /// Under the lock: starts the timer that closes idle databases, once.
    private func startSweeping(_ state: inout State) {
        guard state.sweeper == nil, !state.shutDown else { return }
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        let interval = max(1, idleClose / 4)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.closeIdle() }
        timer.resume()
        state.sweeper = timer
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
        let all = fixed.map { [$0] } ?? state.withLock { $0.open.values.map(\.database) }
        for database in all { database.settle() }
    }

    public func closeAll() {
        let waits: [DispatchGroup] = state.withLock { state in
            state.shutDown = true
            state.sweeper?.cancel()
            state.sweeper = nil
            return Array(state.opening.values) + Array(state.closing.values)
        }
        for group in waits { group.wait() }
        let all: [Database] = state.withLock { state in
            defer { state.open = [:] }
            return state.open.values.map(\.database)
        }
        for database in all { database.close() }
    }
}
