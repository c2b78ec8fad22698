import Foundation
import RTDBData
import RTDBProtocol
import RTDBRules
import Synchronization

/// The server's side of one connection: greets the client, runs its requests in order and
/// answers them.
public final class ServerSession: ListenSink, Sendable {
    private let database: Database
    private let transport: Transport
    public let id: String
    /// Where the connection comes from (an address and port; "embedded" in-process).
    public let peer: String
    /// Who it is without a credential: the owner on an embedded database's connections, no
    /// one on the network's; `unauth` and an expired credential return to it.
    let initialIdentity: Identity

    /// Changed on the database's queue; read there and, for the identity, by a REST stream's
    /// or a timer's check.
    private struct State {
        /// Writes to run when this connection ends.
        var onDisconnect = OnDisconnectQueue()
        var identity: Identity
        /// Set once the transport has closed.
        var isClosed = false
        /// When the credential expires, the server says so (`ac`); replaced with the credential.
        var expiry: CancellationFlag?
        /// Who it is for a monitor, made again when the credential changes.
        var client: OperationRecord.Client?
    }

    private let state: Mutex<State>

    init(database: Database, transport: Transport, identity: Identity, peer: String) {
        self.database = database
        self.transport = transport
        self.peer = peer
        state = Mutex(State(identity: identity))
        self.initialIdentity = identity
        self.id = ServerSession.makeID()
    }

    /// Who the connection's credential names (changed by `auth`, `unauth` and expiry).
    public internal(set) var identity: Identity {
        get { state.withLock { $0.identity } }
        set { state.withLock { $0.identity = newValue } }
    }

    var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Keeps `request` (an `o`, `om` or `oc`) for when the connection ends.
    func recordOnDisconnect(_ request: Request) {
        state.withLock { $0.onDisconnect.record(request) }
    }

    /// The timer of the credential's expiry, replacing (and cancelling) the one before.
    func replaceExpiry(with timer: CancellationFlag?) {
        let previous: CancellationFlag? = state.withLock { state in
            defer { state.expiry = timer }
            return state.expiry
        }
        previous?.cancel()
    }

    func start(host: String) {
        let database = self.database
        // A pipelined burst crosses to the database's queue in one hop.
        let inbox = QueueInbox<Message>(queue: database.queue) { [self] message in
            StageClock.measure(.engine) { self.receive(message) }
        }
        transport.start(onMessage: { message in inbox.post(message) }, onClose: { [self] in
            database.schedule { database in
                let (operations, identity) = self.state.withLock { state in
                    state.isClosed = true
                    defer { state.onDisconnect = OnDisconnectQueue() }
                    return (state.onDisconnect.operations, state.identity)
                }
                database.sessionClosed(self)
                database.runOnDisconnect(operations, as: identity)
                if database.operations.isWatched { self.publish(.disconnect, as: identity) }
            }
        })
        if database.operations.isWatched { publish(.connect, as: identity) }
        let now = Int64(database.clock())
        transport.send(.handshake(Handshake(timestamp: now, host: host, sessionID: id, exactlyOnce: true, guardedMerge: true)))
    }

    /// On the database's queue (its inbox's).
    private func receive(_ message: Message) {
        switch message {
        case .request(let id, let request, let origin):
            database.assumeIsolated { database in
                // A credential past its expiry is revoked before the request is judged, as its
                // timer would: a request handled after the expiry never runs as that identity,
                // whichever of the two the queue reached first.
                if case .user(_, _, let expires?) = identity, expires <= database.clock() / 1000 {
                    database.credentialExpired(self)
                }
                let transport = self.transport
                database.handle(request, from: self, as: identity, origin: origin.map { ($0, id) }) { response in
                    transport.send(.response(id: id, response))
                }
            }
        case .ping:
            transport.send(.pong)
        default:
            break  // other control messages need no answer from a server
        }
    }

    /// Who this connection is, for a monitor, as `identity`.
    func client(as identity: Identity) -> OperationRecord.Client {
        let owner = identity == .admin, user = identity.uid
        if let kept = state.withLock({ $0.client }), kept.owner == owner, kept.user == user { return kept }
        let made = OperationRecord.Client(id: id, address: peer, owner: owner, user: user)
        state.withLock { $0.client = made }
        return made
    }

    /// A connection's start or end, for the monitors.
    private func publish(_ kind: OperationRecord.Kind, as identity: Identity) {
        database.operations.publish(OperationRecord(kind: kind, path: nil, timestamp: database.clock(), micros: 0, bytes: 0,
                                                    client: client(as: identity)))
    }

    func send(_ message: Message) { transport.send(message) }
    public func send(_ push: Push) { transport.send(.push(push)) }
    public func sendIfItFits(_ push: Push) -> Bool { transport.sendIfItFits(.push(push)) }
    public func send(sharing encoding: SharedEncoding) { transport.send(sharing: encoding) }

    private static func makeID() -> String {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<16).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] })
    }
}

/// A connection's onDisconnect operations, in the order received; a cancel forgets those at
/// its path and below.
struct OnDisconnectQueue {
    private(set) var operations: [Request] = []

    mutating func record(_ request: Request) {
        if case .onDisconnectCancel(let path) = request {
            operations.removeAll { operation in
                switch operation {
                case .onDisconnectPut(let p, _), .onDisconnectMerge(let p, _): return path.contains(p)
                default: return false
                }
            }
        } else {
            operations.append(request)
        }
    }
}
