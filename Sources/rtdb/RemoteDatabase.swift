import Foundation
import NIOPosix
import NIOSSL
import RTDBClient
import RTDBProtocol
import RTDBShell

/// A database on a server (`rtdb serve`, the Firebase emulator, hosted Firebase): the client
/// core over a WebSocket, with TLS for `wss://` and `https://` addresses.
final class RemoteDatabase: DatabaseConnection {
    let repo: Repo
    let location: String
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let lastTransport = LastTransport()

    /// `trustedCertificates`: a PEM file to trust instead of the system's authorities.
    init(address: ServerAddress, trustedCertificates: String? = nil, timeout: TimeInterval = 10) throws {
        let tls: NIOSSLContext? = address.secure ? try ClientTLS.context(trustedCertificates: trustedCertificates) : nil
        let group = self.group
        let lastTransport = self.lastTransport
        // Reconnections go where the server last said it lives (its hello or a redirect).
        repo = Repo(connector: { host, lastSession in
            let transport = WebSocketClientTransport(address: host.map { address.at(host: $0) } ?? address,
                                                     lastSessionID: lastSession, tls: tls, group: group)
            lastTransport.set(transport)
            return transport
        })
        location = address.description
        // The first connection must succeed; after that, losing it means reconnecting.
        let deadline = Date().addingTimeInterval(timeout)
        while !repo.isConnected {
            if repo.neverConnected || Date() >= deadline {
                let reason = lastTransport.failure ?? (repo.neverConnected ? "the connection closed before the server's hello" + (address.secure ? "" : " (for a TLS server use wss:// or https://)") : "no answer within \(Int(timeout)) seconds")
                repo.close()
                try? group.syncShutdownGracefully()
                throw RemoteError("cannot connect to \(address): \(reason)")
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

/// The newest transport, to say why connecting failed.
private final class LastTransport: @unchecked Sendable {
    private let lock = NSLock()
    private var transport: WebSocketClientTransport?

    func set(_ transport: WebSocketClientTransport) {
        lock.lock(); self.transport = transport; lock.unlock()
    }

    var failure: String? {
        lock.lock(); defer { lock.unlock() }
        return transport?.failureDescription
    }
}

struct RemoteError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
