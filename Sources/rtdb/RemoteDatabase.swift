import Foundation
import NIOPosix
import NIOSSL
import RTDBClient
import RTDBData
import RTDBProtocol
import RTDBRules
import RTDBTransport
import RTDBShell
import Synchronization

/// A database on a server (`rtdb serve`, the Firebase emulator, hosted Firebase): the client
/// core over a WebSocket, with TLS for `wss://` and `https://` addresses.
final class RemoteDatabase: DatabaseConnection, ServerAdministration, RulesChecking, SnapshotKeeping, OperationMonitoring, QueryExplaining {
    let repo: Repo
    let location: String
    let credential: String
    private let group: MultiThreadedEventLoopGroup
    let address: ServerAddress
    private let tls: NIOSSLContext?
    private struct State {
        /// The credential REST requests carry.
        var restCredential: (token: String, google: Bool)?
        /// Why the first connection failed, when the shell started offline from its cache.
        var startedOffline: String?
        /// Renews a service account's access token before it expires.
        var refresh: Task<Void, Never>?
        var refreshStopped = false
    }
    private let state: Mutex<State>
    /// How long a REST request may take.
    private let timeout: TimeInterval

    /// A credential from the environment: never from the command line, where other users'
    /// `ps` would see it, and never printed.
    struct Credential: Sendable {
        let token: String
        let google: Bool
        let variable: String

        /// RTDB_AUTH_TOKEN (an ID token, a database secret, or "owner" for the emulator) or
        /// RTDB_ACCESS_TOKEN (an OAuth2 access token, e.g. `gcloud auth print-access-token`).
        static func fromEnvironment() -> Credential? {
            if let token = ProcessEnvironment.nonEmpty("RTDB_ACCESS_TOKEN") { return Credential(token: token, google: true, variable: "RTDB_ACCESS_TOKEN") }
            if let token = ProcessEnvironment.nonEmpty("RTDB_AUTH_TOKEN") { return Credential(token: token, google: false, variable: "RTDB_AUTH_TOKEN") }
            return nil
        }
    }

    /// Why the first connection failed, when the shell started offline from its cache.
    var startedOffline: String? { state.withLock { $0.startedOffline } }

    private init(repo: Repo, address: ServerAddress, tls: NIOSSLContext?, credential: Credential?, serviceAccount: (ServiceAccount, String)?,
                 group: MultiThreadedEventLoopGroup, timeout: TimeInterval) {
        self.repo = repo
        self.location = address.description
        self.address = address
        self.tls = tls
        self.timeout = timeout
        state = Mutex(State(restCredential: credential.map { ($0.token, $0.google) }))
        switch credential {
        case _ where serviceAccount != nil:
            self.credential = "OAuth2 access token for \(serviceAccount?.0.email ?? "") (service account key \(serviceAccount?.1 ?? ""), renewed before it expires)"
        case nil: self.credential = "none"
        case .some(let credential) where credential.google: self.credential = "OAuth2 access token (\(credential.variable))"
        case .some(let credential): self.credential = "ID token or database secret (\(credential.variable))"
        }
        self.group = group
    }

    /// Connects; the first connection must succeed (after that, losing it means
    /// reconnecting). `trustedCertificates`: a PEM file to trust instead of the system's
    /// authorities.
    /// `serviceAccount`: a key and its file name; its access tokens are used instead of `credential`.
    /// `cache`: the disk cache; when it was filled online before, a server that does not
    /// answer now is no failure: the shell starts offline and works from the cache.
    static func connect(address: ServerAddress, trustedCertificates: String? = nil, credential: Credential? = nil,
                        serviceAccount: (ServiceAccount, String)? = nil, cache: sending DiskCache? = nil,
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
        }, cache: cache)
        let database = RemoteDatabase(repo: repo, address: address, tls: tls, credential: serviceAccount == nil ? credential : nil,
                                      serviceAccount: serviceAccount, group: group, timeout: max(timeout, 10))
        let failure: String?
        do {
            let connected = try await withTimeout(timeout) { try await repo.firstConnectionEstablished() }
            let closedEarly = "the connection closed before the server's hello" + (address.secure ? "" : " (for a TLS server use wss:// or https://)")
            failure = connected ? nil : lastTransport.failure ?? closedEarly
        } catch {
            failure = lastTransport.failure ?? "no answer within \(Int(timeout)) seconds"
        }
        if let failure {
            if await repo.cacheHasBeenOnline {
                // Reconnecting in the background; the credential goes with the connection when it comes.
                database.state.withLock { $0.startedOffline = failure }
                if let (account, _) = serviceAccount {
                    // No connection until the token is here: the restored writes must be sent signed in.
                    await repo.awaitCredential()
                    database.fetchAccessToken(account)
                } else if let credential {
                    await repo.setCredential(token: credential.token, google: credential.google)
                }
                return database
            }
            await database.close()
            throw RemoteError("cannot connect to \(address): \(failure)")
        }
        if let (account, file) = serviceAccount {
            do {
                let lifetime = try await database.renewAccessToken(account)
                database.renewAccessTokens(account, after: lifetime)
            } catch {
                await database.close()
                throw RemoteError("the service account key \(file) gave no access token: \(error)")
            }
        } else if let credential {
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
        stopRefresh()
        await repo.close()
        try? await group.shutdownGracefully()
    }

    /// Exchanges the service account's key for an access token and signs in with it;
    /// returns how long it lasts, in seconds.
    private func renewAccessToken(_ account: ServiceAccount) async throws -> Double {
        let (token, lifetime) = try await account.accessToken(group: group, timeout: timeout)
        HistoryFilter.hold(token)
        try await withTimeout(timeout) { try await self.repo.authenticate(token: token, google: true) }
        useCredential(token, google: true)
        return lifetime
    }

    /// Renews the token five minutes before it expires (halfway, for a short one); a failed
    /// renewal is tried again a minute later (sooner for a short token).
    private func renewAccessTokens(_ account: ServiceAccount, after lifetime: Double) {
        func renewal(_ lifetime: Double) -> Double { lifetime > 600 ? lifetime - 300 : lifetime / 2 }
        setRefresh(Task { [weak self] in
            var wait = renewal(lifetime)
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: UInt64(wait * 1e9))
                guard let self, !Task.isCancelled else { return }
                do {
                    wait = renewal(try await self.renewAccessToken(account))
                } catch {
                    warn("renewing the access token of \(account.email) failed (\(error)); trying again")
                    wait = min(60, max(1, wait / 2))
                }
            }
        })
    }

    /// The task that fetches or renews the token: one at a time, none after `close` or
    /// once the user chose another credential.
    private func setRefresh(_ task: Task<Void, Never>) {
        // Stopped already, the new task goes at once; otherwise the one it replaces.
        let cancelled: Task<Void, Never>? = state.withLock { state in
            if state.refreshStopped { return task }
            defer { state.refresh = task }
            return state.refresh
        }
        cancelled?.cancel()
    }

    /// Stops fetching and renewing the service account's token, for good.
    private func stopRefresh() {
        let task: Task<Void, Never>? = state.withLock { state in
            state.refreshStopped = true
            defer { state.refresh = nil }
            return state.refresh
        }
        task?.cancel()
    }

    /// For a shell started offline: fetches the first access token in the background, again
    /// and again while the endpoint cannot be reached (the network may be down too), then
    /// renews it as usual. The connection waits for it. The first failure is said; the
    /// retries are quiet. A refusal ends the attempts: `auth` or `logout` then decides.
    private func fetchAccessToken(_ account: ServiceAccount) {
        setRefresh(Task { [weak self] in
            var wait = 1.0
            var said = false
            while !Task.isCancelled {
                guard let self else { return }
                do {
                    let (token, lifetime) = try await account.accessToken(group: group, timeout: timeout)
                    guard !Task.isCancelled else { return }
                    HistoryFilter.hold(token)
                    await repo.setCredential(token: token, google: true)
                    useCredential(token, google: true)
                    renewAccessTokens(account, after: lifetime)
                    return
                } catch let refusal as ServiceAccount.Refusal {
                    warn("\(refusal); the queued writes wait: 'auth' gives another credential, 'logout' connects as no one")
                    return
                } catch {
                    if !said { warn("no access token yet for \(account.email) (\(error)); the shell connects once it has one") }
                    said = true
                }
                try? await Task.sleep(nanoseconds: UInt64(wait * 1e9))
                wait = min(60, wait * 2)
            }
        })
    }

    // MARK: ServerAdministration

    var isLocal: Bool { Self.isLocal(address) }

    /// A server on this machine (a loopback address, localhost, a shared folder's socket).
    static func isLocal(_ address: ServerAddress) -> Bool {
        address.socketPath != nil || HostName.isLoopback(address.host)
    }

    func useCredential(_ token: String?, google: Bool) {
        state.withLock { $0.restCredential = token.map { ($0, google) } }
    }

    func userChoseCredential() {
        stopRefresh()
    }

    func readRules() async throws -> String {
        try Self.accepted(await restRequest("GET", "/.settings/rules.json", body: [])).text
    }

    func writeRules(_ text: String) async throws {
        _ = try Self.accepted(await restRequest("PUT", "/.settings/rules.json", body: Array(text.utf8)))
    }

    let hasRules = true

    /// Asked of the server (`/.settings/rules/check.json`, rtdb serve's, for its owner).
    func checkRules(_ question: RuleQuestion) async throws -> RuleAnswer {
        let reply = try await restRequest("POST", "/.settings/rules/check.json", body: question.body)
        if reply.status == 404 || reply.status == 405 {
            let reason = (try? JSONValue.parse(reply.text))?["error"]?.string ?? "HTTP \(reply.status)"
            throw RemoteError("\(address.host) did not check the rules (\(reason)); rules check needs rtdb serve (a hosted database's rules are tried in the Firebase console's Rules Playground)")
        }
        let text = try Self.accepted(reply).text
        guard let json = try? JSONValue.parse(text), let answer = RuleAnswer(json: json) else {
            throw RemoteError("\(address.host) did not answer the rules check with a verdict")
        }
        return answer
    }

    func ruleCoverage() async throws -> JSONValue {
        let reply = try await restRequest("GET", "/.inspect/coverage.json", body: [])
        if reply.status == 404 {
            let reason = (try? JSONValue.parse(reply.text))?["error"]?.string ?? "HTTP 404"
            throw RemoteError("\(address.host) did not give its rules coverage (\(reason)); rtdb serve and the Firebase emulator keep one")
        }
        let text = try Self.accepted(reply).text
        guard let json = try? JSONValue.parse(text), json["rules"] != nil else {
            throw RemoteError("\(address.host) did not answer with a coverage report")
        }
        return json
    }

    /// The server's namespaces, as rtdb serve and the Firebase emulator list them
    /// (`/.inspect/databases.json`), sorted.
    func namespaces() async throws -> [String] {
        let answer = try await restRequest("GET", "/.inspect/databases.json", body: [])
        guard answer.status == 200, case .array(let items)? = try? JSONValue.parse(answer.text) else {
            throw RemoteError("\(address.host) does not list its namespaces (rtdb serve and the Firebase emulator do; a hosted database has a URL of its own)")
        }
        return items.compactMap { $0["name"]?.string }.sorted()
    }

    // MARK: SnapshotKeeping (rtdb serve's, for its owner)

    private var snapshotEndpoints: SnapshotEndpoints {
        SnapshotEndpoints(server: address.host) { [self] method, path, slow in
            // A save writes the whole tree: a large one takes longer than a read.
            try await restRequest(method, path, body: [], timeout: slow ? max(timeout, SnapshotEndpoints.saveTimeout) : timeout)
        }
    }

    func snapshots() async throws -> [SnapshotInfo] { try await snapshotEndpoints.list() }
    func saveSnapshot(_ name: String) async throws -> SnapshotInfo { try await snapshotEndpoints.save(name) }
    func restoreSnapshot(_ name: String) async throws { try await snapshotEndpoints.restore(name) }
    func removeSnapshot(_ name: String) async throws -> Bool { try await snapshotEndpoints.remove(name) }

    // MARK: QueryExplaining (rtdb serve's, for whoever may read the query)

    func explain(_ path: Path, query: QueryParams?) async throws -> QueryExplanation {
        try ExplainEndpoint.explanation(await restRequest("GET", ExplainEndpoint.target(path, query), body: []), server: address.host)
    }

    // MARK: OperationMonitoring (the profiler's stream: rtdb serve's, and hosted Firebase's)

    func operations() async throws -> AsyncThrowingStream<MonitorEvent, Error> {
        let (target, headers) = restTarget("/.settings/profile.json")
        do {
            let events = try await EventStreamClient.open(host: address.host, port: address.port, unixSocket: address.socketPath,
                                                          target: target, headers: headers, tls: tls, group: group, timeout: timeout)
            return ProfileEvents.from(events)
        } catch let refusal as EventStreamClient.Refusal {
            let hint = refusal.status == 401 ? " (auth with owner, or an access token for a hosted database)" : ""
            throw RemoteError("\(address.host) refused the monitor: \(refusal.reason)\(hint)")
        }
    }

    /// A REST request to this namespace's server at `path`, with the credential as REST takes it.
    private func restRequest(_ method: String, _ path: String, body: [UInt8], timeout: TimeInterval? = nil) async throws -> HTTPClient.Answer {
        guard address.socketPath == nil else { throw RemoteError("the rules of a shared embedded folder cannot be read: it has none") }
        let (target, headers) = restTarget(path)
        return try await HTTPClient.send(method, host: address.host, port: address.port, target: target, headers: headers, body: body,
                                         tls: tls, group: group, timeout: timeout ?? self.timeout)
    }

    /// `path` on this namespace, with the credential as REST takes it: an access token in a
    /// header (kept out of proxies' and servers' request logs); an ID token or secret as
    /// Firebase's REST API takes it, in auth=.
    private func restTarget(_ path: String) -> (target: String, headers: [(String, String)]) {
        var target = path + (path.contains("?") ? "&" : "?") + "ns=" + PercentEncoding.encode(address.namespace)
        var headers: [(String, String)] = []
        if let credential = state.withLock({ $0.restCredential }) {
            if credential.google {
                headers.append(("Authorization", "Bearer " + credential.token))
            } else {
                target += "&auth=" + PercentEncoding.encode(credential.token)
            }
        }
        return (target, headers)
    }

    /// `answer` when the server took the request; its reason when it refused.
    private static func accepted(_ answer: HTTPClient.Answer) throws -> HTTPClient.Answer {
        guard answer.status == 200 else {
            let reason = (try? JSONValue.parse(answer.text))?["error"]?.string ?? "HTTP \(answer.status)"
            let hint = answer.status == 401 ? " (the rules need the owner's credential: auth with owner, or an access token)" : ""
            throw RemoteError("the server refused: \(reason)\(hint)")
        }
        return answer
    }

    /// `--url`, `--emulator HOST:PORT`, or FIREBASE_DATABASE_EMULATOR_HOST unless the
    /// command line names a data folder (`ambient` false): what is given wins over the
    /// environment.
    static func address(url: String?, emulator: String?, namespace: String?, ambient: Bool) throws -> ServerAddress? {
        if let url { return try ServerAddress.parse(url) }
        let fromEnvironment = ambient ? ProcessEnvironment.value("FIREBASE_DATABASE_EMULATOR_HOST") : nil
        if let host = emulator ?? fromEnvironment, !host.isEmpty {
            return try ServerAddress.parse("ws://\(host)?ns=\(namespace ?? "default")")
        }
        return nil
    }
}

/// The newest transport, to say why connecting failed.
private final class LastTransport: Sendable {
    private let transport = Mutex<WebSocketClientTransport?>(nil)

    func set(_ transport: WebSocketClientTransport) {
        self.transport.withLock { $0 = transport }
    }

    var failure: String? {
        transport.withLock { $0?.failureDescription }
    }
}

struct RemoteError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
