import RTDBData
import RTDBProtocol

/// The onDisconnect writes the server acknowledged on the current connection, in the order
/// registered: what the server will write when this client goes away. They mirror the
/// server's own list (a cancel forgets those at and below its path), so the client can list
/// them, and apply them to its own view when it loses the connection, as the official clients
/// do, at the moment the server runs them.
public struct OnDisconnectWrites: Sendable, Equatable {
    public private(set) var writes: [Write] = []

    public var isEmpty: Bool { writes.isEmpty }

    mutating func add(_ write: Write) {
        writes.append(write)
    }

    /// The server forgot the writes at and below `path`.
    mutating func cancel(_ path: Path) {
        writes.removeAll { path.contains($0.path) }
    }

    /// Takes every write: the connection is gone and the server ran them.
    mutating func takeAll() -> [Write] {
        defer { writes = [] }
        return writes
    }
}
