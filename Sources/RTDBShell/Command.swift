import RTDBClient
import RTDBData
import RTDBProtocol

/// A parsed, validated command, with paths resolved against the current location.
public enum Command: Equatable, Sendable {
    case get(Path, shallow: Bool, export: Bool)
    case set(Path, Node)
    case update(Path, [Update])
    case push(Path, Node?)
    case remove(Path, force: Bool)
    case priority(Path, LeafValue?)
    case ls(Path, long: Bool)
    case query(QuerySpec, watch: Bool, events: Set<EventType>, background: Bool)
    case watch(QuerySpec, events: Set<EventType>, background: Bool)
    case watches
    case unwatch(Int?)
    case cd(Path)
    case pwd
    case help(String?)
    case history
    case exit

    public var isWrite: Bool {
        switch self {
        case .set, .update, .push, .remove, .priority: return true
        default: return false
        }
    }
}

/// A command with the options that apply to how its output is shown.
public struct ParsedLine: Equatable, Sendable {
    public var command: Command
    public var json: Bool
}
