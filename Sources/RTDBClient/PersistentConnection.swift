import Foundation
import RTDBData
import RTDBProtocol

// Follows the Firebase JS SDK's PersistentConnection (core/PersistentConnection.ts).

/// The client's link to a server across any number of transports: numbers requests and
/// matches responses to them, keeps what must survive a lost connection, and connects
/// again with backoff.
///
/// What a reconnection restores, in this order: every active listen (with the hash of what
/// the client holds, so unchanged data is not sent again), every write not yet acknowledged
/// (in the order made), and every read still waiting. A compare-and-set write already sent
/// fails with `disconnected` instead: it may or may not have been applied.
///
/// Owned by a `Repo` and used only in its isolation, which runs on `queue`: transport
/// callbacks and timers hop onto the queue and reach the connection through its owner
/// (`reach`), never directly.
final class PersistentConnection {
    enum State: Equatable {
        case connecting
        case connected
        /// Lost or refused; the next attempt is scheduled.
        case waiting
        /// Closed by the client, or by the server for good.
        case closed
    }

    /// A request that outlives one transport.
    private struct Outstanding {
        let request: Request
        let completion: (Response) -> Void
        var sent = false
        /// Reads made while offline fail after a while instead of waiting for a connection.
        var offlineDeadline: DispatchWorkItem?
    }

    /// An active listen, sent again on every new connection.
    private struct ListenSpec {
        let path: Path
        let query: QueryParams?
        let tag: Int?
        let hash: () -> String
        let onComplete: (ResponseStatus) -> Void
    }

    private struct ListenKey: Hashable {
        let path: Path
        let identifier: String
        init(_ path: Path, _ query: QueryParams?) {
            self.path = path
            identifier = query?.identifier ?? "default"
        }
    }

    /// How long a read made while offline waits for a connection.
    var offlineReadTimeout: TimeInterval = 3

    private let connector: Connector
    private let queue: DispatchQueue
    private var backoff: Backoff
    private var transport: Transport?
    /// Bumped for each transport, so callbacks of an old one are ignored.
    private var generation = 0
    /// Where the server said to connect (its hello, or a redirect).
    private var host: String?
    private var redirects = 0
    private var nextRequestID = 1
    /// No request below this number is outstanding (advanced as they are answered).
    private var lowestOutstanding = 1
    /// How this client names its writes to a server that applies each once (`WriteOrigin`):
    /// the same on every connection, so a write sent again is known for what it is.
    let clientName = UUID().uuidString
    /// Whether the current server applies a named write once though it is sent again.
    private var serverAppliesOnce = false
    /// The server checks a merge's guards (rtdb's own do); known once connected.
    private(set) var serverChecksGuards = false
    static let guardsUnchecked = "the server does not check an update's guards (hosted Firebase and its emulator do not), so it was not sent: nothing was written"
    /// Writes and reads, by request number (which is also their order).
    private var outstanding: [Int: Outstanding] = [:]
    /// Requests tied to the current transport (listens and unlistens): dropped with it.
    private var inFlight: [Int: (Response) -> Void] = [:]
    private var listens: [ListenKey: ListenSpec] = [:]
    /// Sent first on every connection; its answer goes to `onAuthAnswer`.
    private var credential: (token: String, google: Bool)?
    private var onAuthAnswer: ((Response) -> Void)?

    private(set) var state: State = .connecting
    /// Offline by the user's choice (`goOffline`): no connection until `goOnline`.
    private(set) var offlineByUser = false
    /// No connection is attempted until `authenticate` gives the credential (or
    /// `unauthenticate` says there is none): what is queued must reach the server signed in
    /// (a service account's token is still being fetched).
    private var awaitingCredential = false
    /// When the current attempt started, in milliseconds since the epoch (local clock).
    private var attemptStarted: Double = 0
    private(set) var everConnected = false
    /// Attempts that failed since the last successful connection.
    private(set) var failedAttempts = 0
    private(set) var serverTimeOffset: Double = 0
    private(set) var sessionID: String?
    /// Why the server ended the connection for good, if it did.
    private(set) var shutdownReason: String?
    /// Why the server stopped accepting the credential, if it did; the client goes on without it.
    private(set) var credentialRevoked: String?
    var onConnectedChange: ((Bool) -> Void)?
    /// An attempt to connect failed (the next one is scheduled, or the client is closed).
    var onAttemptFailed: (() -> Void)?
    var onPush: ((Push) -> Void)?
    /// Told of the warnings a listen's `ok` carries (`no_index`), with its path and query.
    var onListenWarnings: ((Path, QueryParams?, [String]) -> Void)?

    var connected: Bool { state == .connected }
    var closed: Bool { state == .closed }

    /// Runs `work` with this connection in its owner's isolation; called on `queue` only. Set
    /// by the owner before `start`.
    var reach: @Sendable (_ work: @escaping @Sendable (PersistentConnection) -> Void) -> Void = { _ in }

    init(connector: @escaping Connector, policy: ReconnectPolicy, queue: DispatchQueue) {
        self.connector = connector
        self.queue = queue
        backoff = Backoff(policy: policy)
    }

    func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        connect()
    }

    private func connect() {
        if awaitingCredential {
            state = .waiting
            return
        }
        generation += 1
        let generation = self.generation
        let queue = self.queue, reach = self.reach
        state = .connecting
        attemptStarted = Date().timeIntervalSince1970 * 1000
        backoff.attempting()
        let transport = connector(host, sessionID)
        self.transport = transport
        // Answers to a pipelined burst cross to the queue in one hop.
        let inbox = QueueInbox<Message>(queue: queue) { message in
            reach { connection in
                guard connection.generation == generation else { return }
                connection.receive(message)
            }
        }
        transport.start(onMessage: { message in inbox.post(message) }, onClose: {
            queue.async {
                reach { connection in
                    guard connection.generation == generation else { return }
                    connection.transportClosed()
                }
            }
        })
    }

    // MARK: Requests

    /// Sends a write or a read now if connected, otherwise when a connection is up; it
    /// survives reconnections until answered. Returns its number (for `withdraw`).
    @discardableResult
    func send(_ request: Request, completion: @escaping (Response) -> Void) -> Int {
        dispatchPrecondition(condition: .onQueue(queue))
        let id = takeRequestID()
        if closed {
            completion(Self.closedResponse)
            return id
        }
        var entry = Outstanding(request: request, completion: completion)
        if case .get = request, !connected {
            let reach = self.reach
            let deadline = DispatchWorkItem {
                reach { connection in
                    guard let entry = connection.outstanding.removeValue(forKey: id) else { return }
                    entry.completion(.error(.disconnected, DatabaseError.offline.message))
                }
            }
            // Offline by goOffline, no connection is coming: no point in waiting.
            queue.asyncAfter(deadline: .now() + (offlineByUser ? 0 : offlineReadTimeout), execute: deadline)
            entry.offlineDeadline = deadline
        }
        outstanding[id] = entry
        if connected { transmit(id) }
        return id
    }

    /// Takes back a request not sent yet, which hears `response`; false (and nothing done)
    /// once it has gone to the server, or was answered.
    @discardableResult
    func withdraw(_ id: Int, response: Response) -> Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let entry = outstanding[id], !entry.sent else { return false }
        outstanding.removeValue(forKey: id)
        entry.offlineDeadline?.cancel()
        entry.completion(response)
        return true
    }

    /// Drops every queued user write (a set or an update, not a transaction's
    /// compare-and-set): each hears `write_canceled`. One already sent may still be applied.
    func purgeWrites() {
        dispatchPrecondition(condition: .onQueue(queue))
        var purged: [(Response) -> Void] = []
        for (id, entry) in outstanding.sorted(by: { $0.key < $1.key }) {
            switch entry.request {
            case .put(_, _, nil), .merge:
                outstanding.removeValue(forKey: id)
                purged.append(entry.completion)
            default:
                continue
            }
        }
        for completion in purged { completion(.error(.writeCanceled, "the write was dropped from the queue (purge-writes)")) }
    }

    /// Authenticates this connection and every later one with `token` (`gauth`: an OAuth2
    /// access token; `auth`: an ID token or database secret). `answer` hears each answer.
    func authenticate(token: String, google: Bool, answer: @escaping (Response) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        if closed { return answer(Self.closedResponse) }
        credential = (token, google)
        credentialRevoked = nil
        onAuthAnswer = answer
        if connected { transmitCredential() }
        releaseCredentialHold()
    }

    /// Holds every connection until `authenticate` or `unauthenticate` says who the client
    /// is; a connection up or under way is dropped. For a client whose credential is not known
    /// yet (an offline start whose token is being fetched).
    func awaitCredential() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed else { return }
        awaitingCredential = true
        guard let transport else { return }
        // Its late close notice is ignored, as in goOffline; reconnecting waits for the hold.
        generation += 1
        if connected {
            transportClosed()
        } else {
            self.transport = nil
            inFlight = [:]
            state = .waiting
        }
        transport.close()
    }

    private func releaseCredentialHold() {
        guard awaitingCredential else { return }
        awaitingCredential = false
        if state == .waiting && transport == nil && !offlineByUser { connect() }
    }

    /// Drops the credential: this connection goes on as no one (`unauth`), and so do later ones.
    func unauthenticate() {
        dispatchPrecondition(condition: .onQueue(queue))
        // No credential is coming: connect as no one.
        releaseCredentialHold()
        guard credential != nil else { return }
        credential = nil
        onAuthAnswer = nil
        guard connected, let transport else { return }
        let id = takeRequestID()
        inFlight[id] = { _ in }
        transport.send(.request(id: id, .unauth))
    }

    private func transmitCredential() {
        guard let transport, let credential else { return }
        let id = takeRequestID()
        inFlight[id] = { [weak self] response in self?.onAuthAnswer?(response) }
        transport.send(.request(id: id, .auth(credential: credential.token, google: credential.google)))
    }

    func listen(_ path: Path, query: QueryParams?, tag: Int?, hash: @escaping () -> String, onComplete: @escaping (ResponseStatus) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        if closed { return onComplete(.disconnected) }
        let spec = ListenSpec(path: path, query: query, tag: tag, hash: hash, onComplete: onComplete)
        listens[ListenKey(path, query)] = spec
        if connected { transmit(spec) }
    }

    func unlisten(_ path: Path, query: QueryParams?, tag: Int?) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard listens.removeValue(forKey: ListenKey(path, query)) != nil else { return }
        guard connected, let transport else { return }
        let id = takeRequestID()
        inFlight[id] = { _ in }
        transport.send(.request(id: id, .unlisten(path: path, query: query, tag: tag)))
    }

    /// Closes for good: what is still outstanding fails.
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed else { return }
        let wasConnected = connected
        state = .closed
        generation += 1
        transport?.close()
        transport = nil
        failEverything(with: Self.closedResponse)
        if wasConnected { onConnectedChange?(false) }
    }

    /// Drops the current transport as a network failure would.
    func interrupt() {
        dispatchPrecondition(condition: .onQueue(queue))
        transport?.close()
    }

    /// Disconnects and stays offline until `goOnline`: writes and reads queue as they do on
    /// a lost connection.
    func goOffline() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed, !offlineByUser else { return }
        offlineByUser = true
        if let transport {
            // Offline now, not when the transport's close comes round (a WebSocket's ends on
            // its event loop): what follows must queue. Its late notice is ignored.
            generation += 1
            transportClosed()
            transport.close()
        } else {
            state = .waiting
        }
    }

    /// Ends `goOffline`: connects at once.
    func goOnline() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed, offlineByUser else { return }
        offlineByUser = false
        backoff.established()
        if state == .waiting && transport == nil { connect() }
    }

    private static let closedResponse = Response.error(.disconnected, "the connection is closed")

    private func takeRequestID() -> Int {
        defer { nextRequestID += 1 }
        return nextRequestID
    }

    private func transmit(_ id: Int) {
        guard let transport, var entry = outstanding[id] else { return }
        if case .merge(_, _, let guards) = entry.request, !guards.isEmpty, !serverChecksGuards {
            // It would be written unguarded: refused here, as the server would a stale one.
            outstanding.removeValue(forKey: id)
            entry.offlineDeadline?.cancel()
            entry.completion(.error(.guardsUnchecked, Self.guardsUnchecked))
            return
        }
        entry.sent = true
        entry.offlineDeadline?.cancel()
        entry.offlineDeadline = nil
        outstanding[id] = entry
        var origin: WriteOrigin?
        switch entry.request {
        case .put, .merge: if serverAppliesOnce { origin = WriteOrigin(client: clientName, floor: floor()) }
        default: break
        }
        transport.send(.request(id: id, entry.request, origin: origin))
    }

    /// The lowest request number still outstanding: those below were answered (or taken
    /// back unsent) and are never sent again.
    private func floor() -> Int {
        while lowestOutstanding < nextRequestID && outstanding[lowestOutstanding] == nil { lowestOutstanding += 1 }
        return lowestOutstanding
    }

    private func transmit(_ spec: ListenSpec) {
        guard let transport else { return }
        let id = takeRequestID()
        let key = ListenKey(spec.path, spec.query)
        inFlight[id] = { [weak self] response in
            // A refused listen is forgotten, so it is not asked again on reconnection.
            if !response.isOK { self?.listens.removeValue(forKey: key) }
            if response.isOK {
                let warnings = PersistentConnection.warnings(of: response)
                if !warnings.isEmpty { self?.onListenWarnings?(spec.path, spec.query, warnings) }
            }
            spec.onComplete(response.status)
        }
        transport.send(.request(id: id, .listen(path: spec.path, query: spec.query, tag: spec.tag, hash: spec.hash())))
    }

    /// A listen's warnings: the answer's own (in-process), or its data's `w` as the wire
    /// carries them (`{"w": ["no_index"]}`).
    static func warnings(of response: Response) -> [String] {
        if !response.warnings.isEmpty { return response.warnings }
        return response.data.child("w").children.compactMap { _, value in
            if case .string(let text)? = value.leafValue { return text }
            return nil
        }
    }

    // MARK: Incoming

    private func receive(_ message: Message) {
        switch message {
        case .handshake(let hello):
            established(hello)
        case .response(let id, let response):
            if let callback = inFlight.removeValue(forKey: id) {
                callback(response)
            } else if let entry = outstanding.removeValue(forKey: id) {
                entry.completion(response)
            }
        case .push(.authRevoked(let status, let reason)):
            // As the official clients do: drop the credential and start a fresh connection
            // (it would be refused again; a new one must come from the user).
            credential = nil
            credentialRevoked = reason.isEmpty ? status.rawValue : "\(status): \(reason)"
            transport?.close()
            onPush?(.authRevoked(status: status, reason: reason))
        case .push(let push):
            if case let .listenRevoked(path, query) = push {
                listens.removeValue(forKey: ListenKey(path, query))
            }
            onPush?(push)
        case .ping:
            transport?.send(.pong)
        case .reset(let newHost):
            // The database lives elsewhere: connect there at once.
            host = newHost.isEmpty ? nil : newHost
            redirects += 1
            transport?.close()
        case .shutdown(let reason):
            // The server ended this client's access for good (e.g. the database was disabled).
            shutdownReason = reason
            close()
        default:
            break
        }
    }

    private func established(_ hello: Handshake) {
        sessionID = hello.sessionID
        serverAppliesOnce = hello.exactlyOnce
        serverChecksGuards = hello.guardedMerge
        if !hello.host.isEmpty { host = hello.host }
        serverTimeOffset = Self.clockOffset(serverTime: Double(hello.timestamp), sent: attemptStarted,
                                            received: Date().timeIntervalSince1970 * 1000)
        state = .connected
        everConnected = true
        failedAttempts = 0
        redirects = 0
        backoff.established()
        restore()
        onConnectedChange?(true)
    }

    /// The server's clock minus this one's, from a hello stamped (in whole milliseconds)
    /// between `sent` and `received`. Stamped inside that window, the clocks agree as far as
    /// anyone can tell: 0, not the fraction of a millisecond the stamp was truncated by.
    /// Outside it, the offset from the window's middle.
    static func clockOffset(serverTime: Double, sent: Double, received: Double) -> Double {
        if serverTime >= sent.rounded(.down) && serverTime <= received.rounded(.up) { return 0 }
        return (serverTime - (sent + received) / 2).rounded()
    }

    /// Sends what the server must know again: the credential, then listens (so that the
    /// writes after them come back as events), then writes and reads in the order made.
    private func restore() {
        transmitCredential()
        for spec in listens.values { transmit(spec) }
        for id in outstanding.keys.sorted() { transmit(id) }
    }

    private func transportClosed() {
        let wasConnected = connected
        transport = nil
        inFlight = [:]
        let redirected = redirects > 0 && redirects <= 3 && !wasConnected
        if !wasConnected && !redirected && !offlineByUser {
            failedAttempts += 1
            onAttemptFailed?()
        }
        // A compare-and-set already sent may have been applied or not: its caller decides
        // (once this connection's state says it is gone).
        var unknownOutcome: [(Response) -> Void] = []
        for (id, entry) in outstanding.sorted(by: { $0.key < $1.key }) where entry.sent {
            if case .put(_, _, .some) = entry.request {
                outstanding.removeValue(forKey: id)
                unknownOutcome.append(entry.completion)
            } else {
                outstanding[id]?.sent = false
            }
        }
        defer {
            for completion in unknownOutcome { completion(.error(.disconnected, "the connection was lost before the server answered")) }
        }
        // Offline by choice, the connection waits for goOnline whatever the policy.
        guard backoff.policy.enabled || offlineByUser else {
            state = .closed
            failEverything(with: .error(.disconnected, "the connection closed before the server answered"))
            if wasConnected { onConnectedChange?(false) }
            return
        }
        state = .waiting
        if wasConnected { onConnectedChange?(false) }
        if offlineByUser { return }
        let wait = redirected ? 0 : backoff.nextWait()
        let generation = self.generation, reach = self.reach
        queue.asyncAfter(deadline: .now() + wait) {
            reach { connection in
                guard connection.generation == generation, connection.state == .waiting, !connection.offlineByUser else { return }
                connection.connect()
            }
        }
    }

    private func failEverything(with response: Response) {
        let pending = outstanding.sorted { $0.key < $1.key }.map(\.value)
        outstanding = [:]
        inFlight = [:]
        listens = [:]
        for entry in pending {
            entry.offlineDeadline?.cancel()
            entry.completion(response)
        }
    }
}
