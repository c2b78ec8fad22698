import RTDBData
import RTDBProtocol

/// What `ondisconnect PATH …` registers with the server (or cancels).
public enum OnDisconnectAction: Equatable, Sendable {
    /// `set VALUE`, and `remove` (an empty value).
    case set(Path, Node)
    case update(Path, [UpdateEntry])
    case cancel(Path)
}
