import Foundation
import NIOPosix
import RTDBClient
import RTDBProtocol
import RTDBShell

/// A database on a server (`rtdb serve`, the Firebase emulator): the client core over a
/// WebSocket.
final class RemoteDatabase: DatabaseConnection {
    let repo: Repo
    let location: String
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    init(address: ServerAddress, timeout: TimeInterval = 10) throws {
        if address.secure {
            throw RemoteError("TLS connections (wss://, https://) are not available in this build yet; use ws:// or http:// to a local server")
        }
        let group = self.group
        // Reconnections go where the server last said it lives (its hello or a redirect).
        repo = Repo(connector: { host, lastSession in
            WebSocketClientTransport(address: host.map { address.at(host: $0) } ?? address, lastSessionID: lastSession, group: group)
        })
        location = address.description
        // The first connection must succeed; after that, losing it means reconnecting.
        let deadline = Date().addingTimeInterval(timeout)
        while !repo.isConnected {
            if repo.neverConnected || Date() >= deadline {
                repo.close()
                try? group.syncShutdownGracefully()
                throw RemoteError("cannot connect to \(address): is a server listening there?")
            }
            usleep(5_000)
        }
    }

    func close() {
        repo.close()
        try? group.syncShutdownGracefully()
    }

    /// `--url`, `--emulator HOST:PORT`, or FIREBASE_DATABASE_EMULATOR_HOST.
    static func address(url: String?, emulator: String?, namespace: String?) throws -> ServerAddress? {
        if let url { return try ServerAddress.parse(url) }
        if let host = emulator ?? ProcessInfo.processInfo.environment["FIREBASE_DATABASE_EMULATOR_HOST"], !host.isEmpty {
            return try ServerAddress.parse("ws://\(host)?ns=\(namespace ?? "default")")
        }
        return nil
    }
}

struct RemoteError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
