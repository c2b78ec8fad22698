import NIOHTTP1
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBRules

/// The owner's profiler stream (`GET /.settings/profile.json` with `Accept:
/// text/event-stream`, what `firebase database:profile` and `monitor` read), and the REST
/// requests the namespace's monitors are told of.
extension RESTRouter {
    static let profilePath = "/.settings/profile.json"

    func profile(_ head: HTTPRequestHead, _ method: String, _ namespace: String, _ identity: Identity) throws -> RESTOutcome {
        guard NamespaceName.isValid(namespace) else { throw RESTFailure(status: .notFound, message: "invalid namespace \"\(namespace)\"") }
        guard identity == .admin else {
            throw RESTFailure(status: .unauthorized, message: "Permission denied: only the owner may profile the database")
        }
        guard method == "GET" else { throw RESTFailure(status: .methodNotAllowed, message: "the profile is read with GET") }
        guard head.headers.first(name: "Accept")?.contains("text/event-stream") == true else {
            throw RESTFailure(status: .badRequest, message: "the profile is a stream of Server-Sent Events: ask with Accept: text/event-stream")
        }
        do {
            // Opened (and made) as a realtime connection would: the operations to come are
            // what a profile is for.
            guard let database = try namespaces.acquire(namespace) else { throw RESTFailure(status: .notFound, message: "no namespace \(namespace)") }
            return .profile(database, namespace: namespace)
        } catch let failure as RESTFailure {
            throw failure
        } catch {
            log("namespace \(namespace): \(error)")
            throw RESTFailure(status: .notFound, message: Namespaces.clientMessage(for: error, namespace: namespace))
        }
    }

    /// `respond`, telling `database`'s monitors of the request first, when any watch: a GET is
    /// a `rest-read` (its answer's bytes), a PATCH a `rest-update` and the other writes a
    /// `rest-write` (the body's bytes, allowed or not, as a realtime write's).
    static func monitored(_ method: String, _ path: Path, _ items: [String: String], body: Int, peer: String, identity: Identity,
                          database: Database?, _ respond: @escaping @Sendable (RESTReply) -> Void) -> @Sendable (RESTReply) -> Void {
        guard let database, database.operations.isWatched else { return respond }
        let kind: OperationRecord.Kind
        switch method {
        case "GET": kind = .restRead
        case "PATCH": kind = .restUpdate
        case "PUT", "POST", "DELETE": kind = .restWrite
        default: return respond
        }
        let query = kind == .restRead ? (try? Self.query(items)) ?? nil : nil
        // Asked here, off the database's queue (an answer may come on it).
        let unindexed = kind == .restRead && database.isUnindexed(query, at: path)
        let client = OperationRecord.Client(id: "rest", address: peer, owner: identity == .admin, user: identity.uid)
        let feed = database.operations, started = OperationRecord.now()
        return { reply in
            feed.publish(OperationRecord(kind: kind, path: path, query: query, timestamp: Database.systemClock(), micros: OperationRecord.micros(since: started),
                                         bytes: kind == .restRead ? reply.body.count : body, client: client,
                                         allowed: reply.status != .unauthorized, unindexed: unindexed))
            respond(reply)
        }
    }
}
