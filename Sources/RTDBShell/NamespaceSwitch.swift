/// A server's namespaces, for `namespaces` and `use` (as psql's `\l` and `\c`): opens a
/// connection to another one with the same credential and options. It holds the connection in
/// use, which the program closes at exit; `use` replaces it.
@MainActor
public final class NamespaceSwitch {
    /// The connection the shell uses now.
    public private(set) var current: DatabaseConnection
    /// Its namespace.
    public private(set) var name: String
    private let open: @Sendable (String) async throws -> DatabaseConnection

    public init(current: DatabaseConnection, name: String, open: @escaping @Sendable (String) async throws -> DatabaseConnection) {
        self.current = current
        self.name = name
        self.open = open
    }

    /// The server's namespaces, sorted, as the connection in use asks for them.
    func namespaces() async throws -> [String] {
        guard let server = current as? ServerAdministration else { return [name] }
        return try await server.namespaces()
    }

    /// A connection to `name`; the current one stays in use until `adopt`.
    func connect(to name: String) async throws -> DatabaseConnection { try await open(name) }

    /// Makes `next` (of namespace `name`) the connection in use and closes the one before.
    func adopt(_ next: DatabaseConnection, name: String) async {
        let previous = current
        current = next
        self.name = name
        await previous.close()
    }
}
