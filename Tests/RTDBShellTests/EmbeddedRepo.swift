import RTDBClient
import RTDBEngine
import RTDBProtocol

/// A client of `database` as the embedded shell has it: a new in-process connection at each
/// connect (after `offline`, `online` connects again), nothing else ending one.
func embeddedRepo(_ database: Database) -> Repo {
    Repo(connector: { _, _ in
        let (client, server) = InProcessTransport.pair()
        database.accept(server)
        return client
    }, reconnect: .never)
}
