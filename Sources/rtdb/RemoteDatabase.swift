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
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let lastTransport = LastTransport()

    /// A credential from the environment: never from the command line, where other users'
    /// `ps` would see it, and never printed.
    struct Credential {
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

    /// `trustedCertificates`: a PEM file to trust instead of the system's authorities.
    init(address: ServerAddress, trustedCertificates: String? = nil, credential: Credential? = nil, timeout: TimeInterval = 10) throws {
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
            let failed = repo.neverConnected
            if failed || Date() >= deadline {
                let closedEarly = "the connection closed before the server's hello" + (address.secure ? "" : " (for a TLS server use wss:// or https://)")
                let reason = lastTransport.failure ?? (failed ? closedEarly : "no answer within \(Int(timeout)) seconds")
                repo.close()
                try? group.syncShutdownGracefully()
                throw RemoteError("cannot connect to \(address): \(reason)")
            }
            usleep(5_000)
        }
        if let credential { try authenticate(credential, timeout: timeout) }
    }

    private func authenticate(_ credential: Credential, timeout: TimeInterval) throws {
        let answered = DispatchSemaphore(value: 0)
        let lock = NSLock()
        var outcome: Result<Void, DatabaseError>?
        repo.authenticate(token: credential.token, google: credential.google) { result in
            lock.lock(); outcome = result; lock.unlock()
            answered.signal()
        }
        let failure: String?
        if answered.wait(timeout: .now() + timeout) == .timedOut {
            failure = "no answer within \(Int(timeout)) seconds"
        } else {
            lock.lock(); defer { lock.unlock() }
            if case .failure(let error)? = outcome { failure = "\(error)" } else { failure = nil }
        }
        if let failure {
            close()
            throw RemoteError("the server refused the credential in \(credential.variable): \(failure)")
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
