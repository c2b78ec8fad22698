import RTDBData
import RTDBProtocol
import RTDBRules

/// Where a listen's data goes: a realtime session, or a REST stream.
public protocol ListenSink: AnyObject, Sendable {
    func send(_ push: Push)
    /// Sends a listen's first data unless it is larger than the peer takes in one message;
    /// false, and nothing sent, if so.
    func sendIfItFits(_ push: Push) -> Bool
    /// Sends `encoding`'s message, a push that other sinks are sent too: its bytes are made
    /// once for all of them.
    func send(sharing encoding: SharedEncoding)
    /// Who reads through it, for the rules.
    var identity: Identity { get }
}

extension ListenSink {
    /// A sink with no limit on a message (a stream of events) sends it.
    public func sendIfItFits(_ push: Push) -> Bool {
        send(push)
        return true
    }

    /// A sink that writes its own form of a push (a stream of events) sends the push.
    public func send(sharing encoding: SharedEncoding) {
        if case .push(let push) = encoding.message { send(push) }
    }
}

/// One connection's listen at one location, plain or for a query.
final class Listen {
    // The sink outlives its listens: they are removed when it closes.
    unowned let session: ListenSink
    let path: Path
    let params: QueryParams?
    let tag: Int?
    /// What was last sent for a query listen: the window its client holds.
    var lastSent: Node? { didSet { windowEdge = nil } }
    /// Under a limit, the child of `lastSent` nearest the side the limit cuts, once asked for.
    var windowEdge: (key: ChildKey, position: IndexPosition)?
    /// Where the rules that let it read look at the data (none: the data does not decide),
    /// so the writes there are those that can revoke it.
    var readPatterns: [ReadPattern] = []
    var dependsOnData: Bool { !readPatterns.isEmpty }

    init(session: ListenSink, path: Path, params: QueryParams?, tag: Int?) {
        self.session = session
        self.path = path
        self.params = params
        self.tag = tag
    }

    /// Whether the server filters for this listen (bounds or a limit).
    var isFiltered: Bool { !(params?.loadsAllData ?? true) }

    /// `push` as this listen is sent it: a query cut to a depth (`QueryParams.depth`) gets its
    /// window, and each whole child its updates name, cut there.
    func shown(_ push: Push) -> Push {
        // Only a window's updates name whole children (the engine refuses other cut listens).
        guard let depth = params?.depth, isFiltered else { return push }
        switch push {
        case let .data(at, data, tag):
            return .data(path: at, data: data.cut(below: depth - (at.count - path.count)), tag: tag)
        case let .merge(at, updates, tag):
            let below = depth - (at.count - path.count)
            return .merge(path: at, data: updates.map { UpdateEntry($0.path, $0.value.cut(below: below - $0.path.count)) }, tag: tag)
        default:
            return push
        }
    }

    /// The listen's whole window as it is sent (`shown(_:)` of a push at its location).
    func shown(window data: Node) -> Node {
        guard let depth = params?.depth, isFiltered else { return data }
        return data.cut(below: depth)
    }
    var identifier: String { params?.identifier ?? "default" }
}

/// Every listen by location, so that a write finds the listens it concerns by walking its
/// own path (listens at or above it) and the subtree below it (listens beneath).
final class ListenerRegistry {
    private final class Level {
        var children: [String: Level] = [:]
        var listens: [Listen] = []
    }

    private let root = Level()
    private(set) var count = 0

    func add(_ listen: Listen) {
        var level = root
        for key in listen.path.keys {
            if let next = level.children[key] { level = next } else {
                let next = Level()
                level.children[key] = next
                level = next
            }
        }
        level.listens.removeAll { $0.session === listen.session && $0.identifier == listen.identifier }
        level.listens.append(listen)
        count += 1
    }

    /// Removes a session's listen; returns it.
    @discardableResult
    func remove(session: ListenSink, path: Path, identifier: String) -> Listen? {
        var level = root
        var trail: [(Level, String)] = []
        for key in path.keys {
            guard let next = level.children[key] else { return nil }
            trail.append((level, key))
            level = next
        }
        guard let i = level.listens.firstIndex(where: { $0.session === session && $0.identifier == identifier }) else { return nil }
        let removed = level.listens.remove(at: i)
        count -= 1
        // Prune empty levels.
        var current = level
        for (parent, key) in trail.reversed() where current.listens.isEmpty && current.children.isEmpty {
            parent.children[key] = nil
            current = parent
        }
        return removed
    }

    /// Every listen, for a change of rules.
    func all() -> [Listen] {
        var found: [Listen] = []
        func walk(_ level: Level) {
            found += level.listens
            level.children.values.forEach(walk)
        }
        walk(root)
        return found
    }

    func listens(of session: ListenSink) -> [Listen] {
        var found: [Listen] = []
        func walk(_ level: Level) {
            found += level.listens.filter { $0.session === session }
            level.children.values.forEach(walk)
        }
        walk(root)
        return found
    }

    /// The listens a write at these paths concerns, each once.
    func affected(by paths: [Path]) -> [Listen] {
        var seen = Set<ObjectIdentifier>()
        var found: [Listen] = []
        func take(_ listens: [Listen]) {
            for listen in listens where seen.insert(ObjectIdentifier(listen)).inserted { found.append(listen) }
        }
        func takeSubtree(_ level: Level) {
            for child in level.children.values {
                take(child.listens)
                takeSubtree(child)
            }
        }
        for path in paths {
            var level: Level? = root
            take(root.listens)
            for key in path.keys {
                level = level?.children[key]
                guard let current = level else { break }
                take(current.listens)
            }
            if let level { takeSubtree(level) }
        }
        return found
    }
}
