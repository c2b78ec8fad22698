import NIOHTTP1
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBRules

/// The owner's snapshots of a namespace (`snapshot` in the shell):
/// - `GET /.settings/snapshots.json`: `{"NAME": {"saved": MS, "bytes": N}, …}`;
/// - `PUT /.settings/snapshots/NAME.json`: saves the namespace's tree as NAME (replacing one
///   of that name), answered with `{"NAME": {…}}` once durable;
/// - `POST /.settings/snapshots/NAME/restore.json`: makes NAME the whole tree, as one write of
///   `/` (listeners hear what changed), answered with `null` once durable;
/// - `DELETE /.settings/snapshots/NAME.json`: forgets NAME, answered with `null`.
///
/// A snapshot that does not exist is a 404. Failures say what went wrong without the
/// server's file names (the log has them).
extension RESTRouter {
    static let snapshotsPrefix = "/.settings/snapshots"

    /// Whether `path` is one of the snapshot endpoints.
    static func isSnapshotTarget(_ path: String) -> Bool {
        path == snapshotsPrefix + ".json" || path.hasPrefix(snapshotsPrefix + "/")
    }

    /// What a snapshot request asks for.
    private enum SnapshotRequest {
        case list
        case save(String)
        case restore(String)
        case remove(String)
    }

    func snapshots(_ method: String, _ path: String, _ namespace: String, _ identity: Identity,
                   _ done: @escaping @Sendable (RESTOutcome) -> Void) throws {
        guard NamespaceName.isValid(namespace) else { throw RESTFailure(status: .notFound, message: "invalid namespace \"\(namespace)\"") }
        guard identity == .admin else {
            throw RESTFailure(status: .unauthorized, message: "Permission denied: only the owner may keep snapshots")
        }
        let request = try Self.snapshotRequest(method, path)
        var create = false
        if case .save = request { create = true }
        let database: Database?
        do { database = try namespaces.acquire(namespace, create: create) } catch {
            log("namespace \(namespace): \(error)")
            throw RESTFailure(status: .notFound, message: Namespaces.clientMessage(for: error, namespace: namespace))
        }
        let namespaces = self.namespaces, log = self.log
        let finish: @Sendable (RESTReply) -> Void = { reply in
            if database != nil { namespaces.release(namespace) }
            if let problem = reply.problem, reply.status == .internalServerError { log("namespace \(namespace): \(problem)") }
            done(.reply(reply))
        }
        let failed: @Sendable (Error) -> RESTReply = { error in
            let stored = error as? StoreError ?? .failed("\(error)")
            var reply = RESTReply.error(.internalServerError, stored.clientDescription)
            reply.problem = "\(stored)"
            return reply
        }
        guard let database else {
            switch request {
            case .list: return finish(RESTReply(status: .ok, body: Array(SnapshotInfo.json([]).serialized().utf8)))
            case .save: return finish(.error(.internalServerError, "the namespace could not be made"))
            case .restore(let name), .remove(let name): return finish(.error(.notFound, Self.noSnapshot(name)))
            }
        }
        switch request {
        case .list:
            do {
                finish(RESTReply(status: .ok, body: Array(SnapshotInfo.json(try database.snapshots()).serialized().utf8)))
            } catch {
                finish(failed(error))
            }
        case .save(let name):
            database.saveSnapshot(name) { outcome in
                switch outcome {
                case .success(let info): finish(RESTReply(status: .ok, body: Array(SnapshotInfo.json([info]).serialized().utf8)))
                case .failure(let error): finish(failed(error))
                }
            }
        case .restore(let name):
            database.restoreSnapshot(name) { response in
                switch response.status {
                case .ok: finish(RESTReply(status: .ok, body: Array("null".utf8)))
                case .invalidRequest: finish(.error(.notFound, response.message))
                default: finish(.error(.internalServerError, response.message))
                }
            }
        case .remove(let name):
            do {
                finish(try database.removeSnapshot(name) ? RESTReply(status: .ok, body: Array("null".utf8)) : .error(.notFound, Self.noSnapshot(name)))
            } catch {
                finish(failed(error))
            }
        }
    }

    private static func noSnapshot(_ name: String) -> String { "there is no snapshot named \(name)" }

    /// The request `method` makes of `path` (under `/.settings/snapshots`), its name checked.
    private static func snapshotRequest(_ method: String, _ path: String) throws -> SnapshotRequest {
        if path == snapshotsPrefix + ".json" {
            guard method == "GET" else { throw RESTFailure(status: .methodNotAllowed, message: "the list of snapshots is read with GET") }
            return .list
        }
        var rest = path.dropFirst(snapshotsPrefix.count + 1)
        let restoring = rest.hasSuffix("/restore.json")
        if restoring { rest = rest.dropLast("/restore.json".count) } else if rest.hasSuffix(".json") { rest = rest.dropLast(5) } else {
            throw RESTFailure(status: .notFound, message: "not found: a snapshot is /.settings/snapshots/NAME.json, restored with a POST to /.settings/snapshots/NAME/restore.json")
        }
        let name = String(rest)
        guard SnapshotInfo.isValid(name) else { throw RESTFailure(status: .badRequest, message: SnapshotInfo.nameRule(name)) }
        switch (method, restoring) {
        case ("POST", true): return .restore(name)
        case ("PUT", false): return .save(name)
        case ("DELETE", false): return .remove(name)
        case (_, true): throw RESTFailure(status: .methodNotAllowed, message: "a restore is a POST")
        default: throw RESTFailure(status: .methodNotAllowed, message: "a snapshot is saved with PUT and removed with DELETE")
        }
    }
}
