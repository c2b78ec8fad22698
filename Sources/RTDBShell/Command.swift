import RTDBClient
import RTDBData
import RTDBProtocol

/// A parsed, validated command, with paths resolved against the current location.
public enum Command: Equatable, Sendable {
    case get(QuerySpec, shallow: Bool, export: Bool)
    case set(Path, Node)
    case update(Path, [UpdateEntry])
    case push(Path, Node?)
    case remove(Path, force: Bool)
    case priority(Path, LeafValue?)
    case copy(CopyRequest)
    case ls(Path, long: Bool)
    case tree(Path, depth: Int)
    case edit(Path)
    case du(Path, depth: Int)
    /// file "-": standard input; chunk: the largest write, in bytes (nil: the defaults).
    case importFile(Path, file: String, merge: Bool, chunk: Int?, quiet: Bool)
    /// file nil: standard output.
    case export(Path, file: String?, priorities: Bool, quiet: Bool)
    case query(QuerySpec, watch: Bool, events: Set<EventType>, background: Bool)
    /// How the database answers a read (`get` or `query` with `--explain`).
    case explain(QuerySpec)
    case watch(QuerySpec, events: Set<EventType>, background: Bool)
    case watches
    case unwatch(Int?)
    case tx(Path, TransactionChange, verbose: Bool)
    /// nil: list what this session registered.
    case onDisconnect(OnDisconnectAction?)
    case online
    case offline
    /// nil: list the kept-synced paths.
    case keepSynced(Path?, on: Bool)
    case status
    /// The user's writes not yet acknowledged.
    case pending
    /// Drop every queued write (force: without asking at a terminal).
    case purgeWrites(force: Bool)
    /// clear: forget the cached server data; otherwise show what the cache holds.
    case cache(clear: Bool)
    /// Authenticate with a token from a file, or with one made for a uid.
    case auth(AuthSource)
    case logout
    /// file nil: print the rules in force.
    case rules(file: String?)
    /// What the rules would say of a request, making nothing.
    case rulesCheck(RulesCheck)
    /// What the requests made of each part of the rules.
    case rulesCoverage
    /// Every operation of every client at or below the path, as it runs.
    case monitor(Path, background: Bool)
    /// The profiler's report of the operations captured (or read from a file).
    case profile(ProfileRequest)
    /// Save, restore, list or remove a snapshot of the whole tree.
    case snapshot(SnapshotAction)
    /// The server's namespaces.
    case namespaces
    /// Move the session to another namespace of the server.
    case use(String)
    case sleep(seconds: Double)
    /// Another command, run again and again.
    indirect case repeating(RepeatRequest)
    /// on, off, or nil: the other one.
    case timing(Bool?)
    /// on, off, or nil: the other one.
    case pager(Bool?)
    case cd(Path)
    case pwd
    case help(String?)
    case history
    case exit
}

/// A command with the options that apply to how its output is shown.
extension Command {
    var isTiming: Bool { if case .timing = self { return true } else { return false } }

    /// Whether `--format` shapes what it prints. Not for `repeat`, whose every run formats
    /// its own output as it comes; nor for export and profile, whose JSON is a file's
    /// format (an export is written as it is read, never whole in memory).
    var printsFormattedData: Bool {
        switch self {
        case .repeating, .export, .profile: return false
        default: return true
        }
    }

    /// A command that prints until it is stopped (a foreground or background watch or
    /// monitor): its name in messages, and the members of its JSON lines, which are the
    /// columns of its csv and tsv.
    var streams: (name: String, background: Bool, columns: [String])? {
        switch self {
        case let .watch(_, _, background): return ("watch", background, EventFormatter.members)
        case let .query(_, watch, _, background) where watch: return ("query --watch", background, EventFormatter.members)
        case let .monitor(_, background): return ("monitor", background, OperationRecord.members)
        default: return nil
        }
    }

    /// Commands whose whole output comes at their end, so it can go through a pager.
    var isPageable: Bool {
        switch self {
        case .get, .explain, .ls, .tree, .du, .help, .history, .watches, .status: return true
        case .query(_, let watch, _, _): return !watch
        default: return false
        }
    }
}

/// Where `auth` takes its token from.
public enum AuthSource: Equatable, Sendable {
    /// A file holding a token ("-": standard input).
    case file(String)
    /// An unsigned token made here for `uid`, with extra claims (local servers only).
    case uid(String, claims: JSONValue)
}

public struct ParsedLine: Equatable, Sendable {
    public var command: Command
    /// `--json` (`.json`) or `--format`; nil: the program's, or output for a person.
    public var format: OutputFormat?
    public var noColor = false
}
