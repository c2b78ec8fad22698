import Foundation
import NIOPosix
import NIOSSL
import RTDBClient
import RTDBProtocol
import RTDBTransport
import RTDBShell

/// A database on a server (`rtdb serve`, the Firebase emulator, hosted Firebase): the client
/// core over a WebSocket, with TLS for `wss://` and `https://` addresses.
final class RemoteDatabase: DatabaseConnection {
    let repo: Repo
    let location: String
    let credential: String
    private let group: MultiThreadedEventLoopGroup

    /// A credential from the environment: never from the command line, where other users'
    /// `ps` would see it, and never printed.
    struct Credential: Sendable {
        let token: String
        let google: Bool
        let variable: String

        /// RTDB_AUTH_TOKEN (an ID token, a database secret, or "owner" for the emulator) or
        /// RTDB_ACCESS_TOKEN (an OAuth2 access token, e.g. `gcloud auth print-access-token`).
        static func fromEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment) -> Credential? {
            if let token = env["RTDB_ACCESS_TOKEN"], !token.isEmpty { return Credential(token: token, google: true, variable: "RTDB_ACCESS_TOKEN") }
            if let token = env["RTDB_AUTH_TOKEN"], !token.isEmpty { return Credential(token: token, google: false, variable: "RTDB_AUTH_TOKEN") }
            return nil
        }
    }

    private init(repo: Repo, location: String, credential: Credential?, group: MultiThreadedEventLoopGroup) {
        self.repo = repo
        self.location = location
        switch credential {
        case nil: self.credential = "none"
        case .some(let credential) where credential.google: self.credential = "OAuth2 access token (\(credential.variable))"
        case .some(let credential): self.credential = "ID token or database secret (\(credential.variable))"
        }
        self.group = group
    }

    /// Connects; the first connection must succeed (after that, losing it means
    /// reconnecting). `trustedCertificates`: a PEM file to trust instead of the system's
    /// authorities.
    static func connect(address: ServerAddress, trustedCertificates: String? = nil, credential: Credential? = nil,
                        timeout: TimeInterval = 10) async throws -> RemoteDatabase {
        let tls: NIOSSLContext? = address.secure ? try ClientTLS.context(trustedCertificates: trustedCertificates) : nil
        let lastTransport = LastTransport()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // Reconnections go where the server last said it lives (its hello or a redirect).
        let repo = Repo(connector: { host, lastSession in
            let transport = WebSocketClientTransport(address: host.map { address.at(host: $0) } ?? address,
                                                     lastSessionID: lastSession, tls: tls, group: group)
            lastTransport.set(transport)
            return transport
        })
        let database = RemoteDatabase(repo: repo, location: address.description, credential: credential, group: group)
        let failure: String?
        do {
            let connected = try await withTimeout(timeout) { try await repo.firstConnectionEstablished() }
            let closedEarly = "the connection closed before the server's hello" + (address.secure ? "" : " (for a TLS server use wss:// or https://)")
            failure = connected ? nil : lastTransport.failure ?? closedEarly
        } catch {
            failure = lastTransport.failure ?? "no answer within \(Int(timeout)) seconds"
        }
        if let failure {
            await database.close()
            throw RemoteError("cannot connect to \(address): \(failure)")
        }
        if let credential {
            do {
                try await withTimeout(timeout) { try await repo.authenticate(token: credential.token, google: credential.google) }
            } catch {
                await database.close()
                throw RemoteError("the server refused the credential in \(credential.variable): \(error)")
            }
        }
        return database
    }

    func close() async {
        await repo.close()
        try? await group.shutdownGracefully()
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
///
/// `@unchecked Sendable`: guarded by `lock`, which the compiler cannot see.
private final class LastTransport: @unchecked Sendable {
    private let lock = NSLock()
    private var transport: WebSocketClientTransport?

    func set(_ transport: WebSocketClientTransport) {
        lock.withLock { self.transport = transport }
    }

    var failure: String? {
        lock.withLock { transport?.failureDescription }
    }
}

struct RemoteError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
