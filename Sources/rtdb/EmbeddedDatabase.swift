import Foundation
import RTDBClient
import RTDBProtocol
import RTDBEngine
import RTDBShell

/// Embedded mode: the server engine in this process, behind an in-process connection that
/// carries the same protocol messages a socket would.
final class EmbeddedDatabase: DatabaseConnection {
    let database: Database
    let repo: Repo
    let location: String
    let credential = "none needed (embedded: full access)"

    init(folder: String) throws {
        let database = try Database(folder: folder)
        self.database = database
        // A new in-process connection each time the client connects: after `offline`, `online`
        // connects again. Nothing else ends one, so there is no reconnection policy.
        repo = Repo(connector: { _, _ in
            let (client, server) = InProcessTransport.pair()
            database.accept(server)
            return client
        }, reconnect: .never)
        location = folder
    }

    func close() async {
        await repo.close()
        database.close()
    }

    /// `$XDG_DATA_HOME/rtdb/server`, or `~/.local/share/rtdb/server`: one folder per namespace.
    static var defaultServerFolder: String {
        (defaultFolder as NSString).deletingLastPathComponent + "/server"
    }

    /// `$XDG_DATA_HOME/rtdb/default`, or `~/.local/share/rtdb/default`.
    static var defaultFolder: String {
        let env = ProcessInfo.processInfo.environment
        if let xdg = env["XDG_DATA_HOME"], !xdg.isEmpty { return xdg + "/rtdb/default" }
        let home = env["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/rtdb/default"
    }
}
