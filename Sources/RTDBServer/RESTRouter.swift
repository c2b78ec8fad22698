import Foundation
import NIOCore
import NIOHTTP1
import NIOConcurrencyHelpers
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBRules

/// The REST API's meaning, apart from the connection it came on: `/path.json` with GET, PUT,
/// POST, PATCH and DELETE, `print`, `shallow`, `format=export`, queries and ETags, a GET's
/// `explain=true` (how it is answered, not its data), errors as
/// `{"error": …}`; and what the emulator's tooling asks for besides: `/.settings/rules.json`,
/// `/.inspect/databases.json`, `/.inspect/coverage[.json]` and `/PATH/.upload` (a form's
/// JSON file); and the owner's `/.settings/rules/check.json` (`rules check`) and
/// `/.settings/snapshots…` (`snapshot`) and `/.settings/profile.json` (`monitor`, `profile`).
/// It runs off the event loops (opening a namespace
/// reads its log, a body may be megabytes of JSON) and answers through a completion, once
/// per request.
struct RESTRouter: Sendable {
    let namespaces: Namespaces
    /// Who a request without a credential comes from.
    var defaultIdentity: Identity = .anonymous
    /// Whether `/` shows the data viewer (`ViewerAssets`).
    var viewer = false
    /// Where failures to open a namespace are reported in full (the client gets less).
    let log: @Sendable (String) -> Void

    /// Routes one whole request from `peer` (its address); `done` gets its outcome, from any
    /// thread.
    func route(_ head: HTTPRequestHead, body: [UInt8], peer: String = "?", _ done: @escaping @Sendable (RESTOutcome) -> Void) {
        do {
            try routeTarget(head, body, peer, done)
        } catch let failure as RESTFailure {
            done(.reply(.error(failure.status, failure.message)))
        } catch {
            done(.reply(.error(.internalServerError, "\(error)")))
        }
    }

    private func routeTarget(_ head: HTTPRequestHead, _ body: [UInt8], _ peer: String, _ done: @escaping @Sendable (RESTOutcome) -> Void) throws {
        var (rawPath, items) = Self.split(head.uri)
        var body = body
        if rawPath == "/.ws" {
            throw RESTFailure(status: .badRequest, message: "/.ws is the realtime protocol: connect with a WebSocket upgrade")
        }
        let namespace = items["ns"] ?? Self.namespace(fromHost: head.headers.first(name: "Host"))
        if rawPath == "/.inspect/databases.json" {
            // Names only, to anyone (the Emulator UI asks without a credential), as the emulator does.
            let list = JSONValue.array(namespaces.names(requested: namespace).map { .object([("name", .string($0))]) })
            return done(.reply(RESTReply(status: .ok, body: Array(list.serialized().utf8))))
        }
        if rawPath == "/.inspect/coverage.json" || rawPath == "/.inspect/coverage" {
            return done(.reply(try coverage(html: rawPath == "/.inspect/coverage", head, items, namespace)))
        }
        var method = head.method.rawValue
        if viewer, method == "GET" || method == "HEAD", let file = ViewerAssets.file(at: rawPath) {
            // Only this server's own files and requests: no inline code, nothing from elsewhere.
            return done(.reply(RESTReply(status: .ok, body: method == "HEAD" ? [] : file.body,
                                         headers: [("Content-Security-Policy", ViewerAssets.contentSecurityPolicy),
                                                   ("X-Content-Type-Options", "nosniff")],
                                         contentType: file.type)))
        }
        if let target = try Self.uploadTarget(rawPath) {
            // The Emulator UI's import: the form's JSON file replaces the location, as a PUT of
            // it would; the answer is a silent PUT's.
            guard method == "POST" else {
                throw RESTFailure(status: .methodNotAllowed, message: "an upload is a POST of a multipart/form-data form with the JSON file in its field myFile")
            }
            do { body = try MultipartForm.field("myFile", in: body, contentType: head.headers.first(name: "Content-Type")) } catch {
                throw RESTFailure(status: .badRequest, message: "Invalid upload: \(error.message)")
            }
            (rawPath, method) = (target, "PUT")
            items["print"] = "silent"
        }
        guard rawPath.hasSuffix(".json") else {
            throw RESTFailure(status: .notFound, message: "not found: REST paths end in .json, as in /users/ada.json; WebSocket clients connect to /.ws")
        }
        if method == "POST", let override = head.headers.first(name: "X-HTTP-Method-Override") ?? items["x-http-method-override"] {
            method = override.uppercased()
        }
        let identity = try Self.identity(head, items, default: defaultIdentity)
        if rawPath == "/.settings/rules.json" {
            return done(.reply(try settings(method, namespace, body, identity)))
        }
        if rawPath == "/.settings/rules/check.json" {
            return done(.reply(try checkRules(method, namespace, body, identity)))
        }
        if Self.isSnapshotTarget(rawPath) {
            return try snapshots(method, rawPath, namespace, identity, done)
        }
        if rawPath == Self.profilePath {
            return done(try profile(head, method, namespace, identity))
        }
        if method != "GET" { try Self.checkWriteParameters(items) }
        if method != "PATCH", head.headers.contains(name: Self.guardsHeader) {
            throw RESTFailure(status: .badRequest, message: "\(Self.guardsHeader) guards a PATCH; a PUT or DELETE takes if-match")
        }
        let path = try Self.path(fromTarget: rawPath)
        let streaming = method == "GET" && head.headers.first(name: "Accept")?.contains("text/event-stream") == true
        let explaining = try method == "GET" && Self.explains(items)
        if explaining && streaming {
            throw RESTFailure(status: .badRequest, message: "explain=true describes one read: it does not go with an event stream")
        }
        let acquired: Database?
        do {
            // A plain read of a namespace that does not exist opens and creates nothing.
            acquired = try namespaces.acquire(namespace, create: method != "GET" || streaming)
        } catch {
            // The full reason (with the server's file names) is for the server's log only.
            log("namespace \(namespace): \(error)")
            throw RESTFailure(status: .notFound, message: Namespaces.clientMessage(for: error, namespace: namespace))
        }
        if streaming, let acquired {
            // The stream releases the namespace when it ends.
            var query: QueryParams?
            do {
                query = try Self.query(items)
                if let depth = try Self.depth(items) {
                    query?.depth = depth
                    guard let query, !query.isCutWithoutWindow else {
                        throw RESTFailure(status: .badRequest, message: "depth=N streams a window: give orderBy with limitToFirst, limitToLast or bounds")
                    }
                }
            } catch { namespaces.release(namespace); throw error }
            guard acquired.canRead(path, query: query, as: identity) else {
                namespaces.release(namespace)
                throw RESTFailure(status: .unauthorized, message: "Permission denied")
            }
            return done(.stream(acquired, namespace: namespace, path, query, identity, export: items["format"] == "export"))
        }
        // Released once, by whichever comes first: the answer or a refusal.
        let held = NIOLockedValueBox(acquired != nil)
        let namespaces = self.namespaces
        let release: @Sendable () -> Void = {
            if held.withLockedValue({ let was = $0; $0 = false; return was }) { namespaces.release(namespace) }
        }
        let respond = Self.monitored(method, path, items, body: body.count, peer: peer, identity: identity, database: acquired) { reply in
            release()
            done(.reply(reply))
        }
        do {
            if explaining {
                try explain(items, path, acquired, namespace, identity, respond)
            } else {
                try route(method, head, items, path, body, acquired, namespace, identity, respond)
            }
        } catch let failure as RESTFailure {
            // Answered as a refusal is: the monitors hear of it too.
            respond(.error(failure.status, failure.message))
        } catch {
            release()
            throw error
        }
    }

    private func route(_ method: String, _ head: HTTPRequestHead, _ items: [String: String], _ path: Path, _ body: [UInt8],
                       _ database: Database?, _ namespace: String, _ identity: Identity,
                       _ respond: @escaping @Sendable (RESTReply) -> Void) throws {
        let print = items["print"]
        let pretty = print == "pretty"
        let silent = print == "silent"
        let export = items["format"] == "export"
        let render: @Sendable (Node) -> [UInt8] = { JSONWriter.bytes($0, options: .init(export: export, pretty: pretty)) }
        if method != "GET" && method != "DELETE" && path.isInfo {
            throw RESTFailure(status: .badRequest, message: "Invalid path: /.info is read-only")
        }
        switch method {
        case "GET":
            let query = try Self.query(items)
            let shallow = items["shallow"] == "true"
            let depth = try Self.depth(items)
            let wantsETag = head.headers.first(name: "X-Firebase-ETag") == "true"
            let ifNoneMatch = head.headers.first(name: "if-none-match")
            let attachment = items["download"].map { [("Content-Disposition", Self.attachment(named: $0))] } ?? []
            let answer: @Sendable (Node) -> Void = { node in
                let value = shallow ? node.shallow : depth.map { node.cut(below: $0) } ?? node
                var headers = attachment
                if wantsETag || ifNoneMatch != nil { headers.append(("ETag", Self.etag(node))) }
                if let ifNoneMatch, ifNoneMatch == Self.etag(node) {
                    return respond(RESTReply(status: .notModified, body: [], headers: headers))
                }
                respond(RESTReply(status: .ok, body: silent ? [] : render(value), headers: headers))
            }
            if let database {
                database.submit(.get(path: path, query: query), as: identity) { response in
                    guard response.isOK else { return respond(Self.failure(response)) }
                    answer(response.data)
                }
            } else {
                _ = try readableRules(of: namespace, path, query, identity)
                answer(.empty)
            }
        case "PUT", "DELETE":
            let database = try Self.opened(database)
            var value = Node.empty
            if method == "PUT" {
                // The body itself is kept: a big one's children stay its text until touched.
                do { value = try JSONReader.parse(data: body, options: .init(base: path)) } catch {
                    throw RESTFailure(status: .badRequest, message: "Invalid data; couldn't parse JSON object, array, or value: \(error)")
                }
            }
            let ifMatch = head.headers.first(name: "if-match")
            let hash = ifMatch.map { $0 == "null_etag" ? "" : $0 }
            // The answer holds the value as the write left it (not read again after it).
            database.write(path, value, hash: hash, as: identity) { response in
                if response.status == .dataStale {
                    // The current value and its ETag, for a client that may read them.
                    return database.submit(.get(path: path, query: nil), as: identity) { read in
                        guard read.isOK else { return respond(.error(.preconditionFailed, "the data changed since it was read")) }
                        respond(RESTReply(status: .preconditionFailed, body: render(read.data), headers: [("ETag", Self.etag(read.data))]))
                    }
                }
                guard response.isOK else { return respond(Self.failure(response)) }
                let written = response.data
                var headers: [(String, String)] = []
                if ifMatch != nil { headers.append(("ETag", Self.etag(written))) }
                if silent { return respond(RESTReply(status: .noContent, body: [], headers: headers)) }
                respond(RESTReply(status: .ok, body: method == "DELETE" ? Array("null".utf8) : render(written), headers: headers))
            }
        case "POST":
            let database = try Self.opened(database)
            let value: Node
            do { value = try Self.parse(body) { try JSONReader.parse(bytes: $0, options: .init(base: path.child("-AAAAAAAAAAAAAAAAAAA"))) } } catch {
                throw RESTFailure(status: .badRequest, message: "Invalid data; couldn't parse JSON object, array, or value: \(error)")
            }
            database.push(path, value, as: identity) { key, response in
                guard response.isOK else { return respond(Self.failure(response)) }
                if silent { return respond(RESTReply(status: .noContent, body: [])) }
                respond(RESTReply(status: .ok, body: Array(JSONValue.object([("name", .string(key))]).serialized().utf8)))
            }
        case "PATCH":
            let database = try Self.opened(database)
            let entries: [(Path, Node)]
            do {
                entries = try Self.parse(body) { try JSONReader.parseUpdate(bytes: $0, base: path) }
                try validateUpdatePaths(entries, base: path)
            } catch {
                throw RESTFailure(status: .badRequest, message: "Invalid data; couldn't parse JSON object: \(error)")
            }
            let guards = try Self.guards(head.headers[Self.guardsHeader])
            var patch = Node.empty
            for (relative, value) in entries { patch = patch.setting(relative, to: value) }
            database.submit(.merge(path: path, data: entries.map { UpdateEntry($0.0, $0.1) }, guards: guards), as: identity) { [patch] response in
                if response.status == .dataStale { return respond(.error(.preconditionFailed, response.message)) }
                guard response.isOK else { return respond(Self.failure(response)) }
                if silent { return respond(RESTReply(status: .noContent, body: [])) }
                respond(RESTReply(status: .ok, body: render(patch)))
            }
        default:
            throw RESTFailure(status: .methodNotAllowed, message: "method \(method) is not supported: use GET, PUT, POST, PATCH or DELETE")
        }
    }

    /// `GET …?explain=true`: how the read is answered (`QueryExplanation`), not its data. A
    /// namespace that does not exist is explained as the nothing it holds, and not opened.
    private func explain(_ items: [String: String], _ path: Path, _ database: Database?, _ namespace: String, _ identity: Identity,
                         _ respond: @escaping @Sendable (RESTReply) -> Void) throws {
        let query = try Self.query(items)
        let reply: @Sendable (QueryExplanation) -> Void = { respond(RESTReply(status: .ok, body: Array($0.json.serialized().utf8))) }
        guard let database else {
            let rules = try readableRules(of: namespace, path, query, identity)
            let use: QueryExplanation.Use = query.map { $0.loadsAllData ? .whole : $0.index == .key ? .keyOrder : .built } ?? .whole
            return reply(Database.explanation(path, query, rules: rules, use: use, children: 0, returned: 0, micros: 0, listens: 0))
        }
        database.explain(path, query: query, as: identity) { result in
            switch result {
            case .success(let explanation): reply(explanation)
            case .failure(let refused): respond(Self.failure(refused.response))
            }
        }
    }

    /// The rules of a namespace with no folder, once they let `identity` read `path`: it
    /// holds nothing, which its rules may still hide.
    private func readableRules(of namespace: String, _ path: Path, _ query: QueryParams?, _ identity: Identity) throws -> SecurityRules {
        let rules = namespaces.rules(for: namespace)
        guard rules.canRead(path, identity: identity, query: query, data: .empty, now: Database.systemClock()) else {
            throw RESTFailure(status: .unauthorized, message: "Permission denied")
        }
        return rules
    }

    /// A refused request's REST status: 401 for the rules, 500 for a write that could not be
    /// made durable, 400 for the rest.
    private static func failure(_ response: Response) -> RESTReply {
        switch response.status {
        case .permissionDenied: return .error(.unauthorized, response.message)
        case .writeFailed: return .error(.internalServerError, response.message)
        default: return .error(.badRequest, response.message)
        }
    }

    /// Who a request comes from: the credential of `auth=`, `access_token=` or an
    /// `Authorization: Bearer` header; the owner may act as another with
    /// `auth_variable_override` (a JSON object, or null for no one).
    static func identity(_ head: HTTPRequestHead, _ items: [String: String], default fallback: Identity) throws -> Identity {
        var credential = items["auth"] ?? items["access_token"]
        if credential == nil, let header = head.headers.first(name: "Authorization") {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { credential = String(parts[1]) }
        }
        guard let credential else { return fallback }
        let now = Date().timeIntervalSince1970
        var acting: JSONValue?
        // Only the owner may act as someone else; anyone else's override is ignored.
        if credential == Identity.ownerCredential, let text = items["auth_variable_override"] {
            guard let override = try? JSONValue.parse(text), override == .null || override.members != nil else {
                throw RESTFailure(status: .badRequest, message: "auth_variable_override must be a JSON object or null")
            }
            acting = override
        }
        do {
            return try Identity.from(credential: credential, acting: acting, now: now)
        } catch Identity.Refusal.expired {
            throw RESTFailure(status: .unauthorized, message: "Auth token is expired")
        } catch Identity.Refusal.invalid(let reason) {
            throw RESTFailure(status: .unauthorized, message: "Could not parse auth token: \(reason)")
        }
    }

    /// `/.settings/rules.json`: the owner reads (GET) and replaces (PUT) a namespace's rules.
    /// New rules are checked whole first; on an error the old rules stay in force.
    private func settings(_ method: String, _ namespace: String, _ body: [UInt8], _ identity: Identity) throws -> RESTReply {
        guard NamespaceName.isValid(namespace) else { throw RESTFailure(status: .notFound, message: "invalid namespace \"\(namespace)\"") }
        guard identity == .admin else {
            throw RESTFailure(status: .unauthorized, message: "Permission denied: only the owner may read or change the rules")
        }
        switch method {
        case "GET":
            return RESTReply(status: .ok, body: Array(namespaces.rules(for: namespace).source.utf8))
        case "PUT":
            guard let text = String(validating: body, as: UTF8.self) else {
                throw RESTFailure(status: .badRequest, message: "the rules are not valid UTF-8")
            }
            let rules: SecurityRules
            do { rules = try SecurityRules(parsing: text) } catch {
                throw Self.parseFailure(error, then: "; the rules were not changed")
            }
            namespaces.setRules(rules, for: namespace)
            return RESTReply(status: .ok, body: Array(#"{"status":"ok"}"#.utf8))
        default:
            throw RESTFailure(status: .methodNotAllowed, message: "the rules are read with GET and replaced with PUT")
        }
    }

    /// Rules with a mistake, worded as the emulator words it (`LINE:COL: Parse error.`), which
    /// tooling such as @firebase/rules-unit-testing matches, then what was wrong.
    private static func parseFailure(_ error: RulesError, then more: String = "") -> RESTFailure {
        RESTFailure(status: .badRequest, message: "\(error.line):\(error.column): Parse error. \(error.message)" + more)
    }

    /// `/.inspect/coverage.json` and `/.inspect/coverage` (a page): what the requests to the
    /// namespace made of each part of its rules since they were set. To anyone, as the
    /// emulator answers its tooling, while the server shows what its rules saw (on this
    /// machine only); to the owner otherwise.
    private func coverage(html: Bool, _ head: HTTPRequestHead, _ items: [String: String], _ namespace: String) throws -> RESTReply {
        guard head.method == .GET else { throw RESTFailure(status: .methodNotAllowed, message: "the coverage report is read with GET") }
        guard NamespaceName.isValid(namespace) else { throw RESTFailure(status: .notFound, message: "invalid namespace \"\(namespace)\"") }
        if !namespaces.showsRuleValues, try Self.identity(head, items, default: defaultIdentity) != .admin {
            throw RESTFailure(status: .unauthorized, message: "Permission denied: only the owner may read the rules coverage of a server that listens beyond this machine")
        }
        let report = namespaces.coverage(for: namespace)
        if html {
            return RESTReply(status: .ok, body: Array(report.html(namespace: namespace).utf8), contentType: "text/html; charset=utf-8")
        }
        return RESTReply(status: .ok, body: Array(report.json.serialized().utf8))
    }

    /// `/.settings/rules/check.json`: the owner asks what the rules would say of a request
    /// (a `RuleQuestion`), on the namespace's data as it is, making nothing; the answer is a
    /// `RuleAnswer`'s JSON. A namespace that does not exist is asked about as empty, and is
    /// not made.
    private func checkRules(_ method: String, _ namespace: String, _ body: [UInt8], _ identity: Identity) throws -> RESTReply {
        guard NamespaceName.isValid(namespace) else { throw RESTFailure(status: .notFound, message: "invalid namespace \"\(namespace)\"") }
        guard identity == .admin else {
            throw RESTFailure(status: .unauthorized, message: "Permission denied: only the owner may check the rules")
        }
        guard method == "POST" else { throw RESTFailure(status: .methodNotAllowed, message: "a rules check is a POST of the question") }
        do {
            let question = try RuleQuestion(body: body)
            var rules: SecurityRules?
            if let text = question.rules {
                do { rules = try SecurityRules(parsing: text) } catch {
                    throw Self.parseFailure(error)
                }
            }
            let database: Database?
            do { database = try namespaces.acquire(namespace, create: false) } catch {
                log("namespace \(namespace): \(error)")
                throw RESTFailure(status: .notFound, message: Namespaces.clientMessage(for: error, namespace: namespace))
            }
            let answer: RuleAnswer
            if let database {
                defer { namespaces.release(namespace) }
                answer = try database.answer(question, rules: rules)
            } else {
                answer = try Database.answer(question, rules: rules ?? namespaces.rules(for: namespace), data: .empty,
                                             now: Database.systemClock())
            }
            return RESTReply(status: .ok, body: Array(answer.json.serialized().utf8))
        } catch let invalid as RuleQuestion.Invalid {
            throw RESTFailure(status: .badRequest, message: "Invalid rules check: \(invalid)")
        }
    }

    /// A GET's query parameters, checked. With `shallow`, the query's result is made shallow,
    /// its children in key order unless `orderBy` says otherwise, as the emulator answers
    /// `firebase emulators:export`'s probe (`shallow=true&limitToFirst=1`); hosted Firebase
    /// refuses the pair.
    static func query(_ items: [String: String]) throws -> QueryParams? {
        var items = items
        if items["shallow"] == "true", items["orderBy"] == nil, RESTQuery.filters.contains(where: { items[$0] != nil }) {
            items["orderBy"] = #""$key""#
        }
        do { return try RESTQuery.params(items) } catch let f as RESTQuery.Failure { throw RESTFailure(status: .badRequest, message: f.message) }
    }

    /// `depth=N` (rtdb's own): the answer cut N levels below the location, each object there
    /// as `{".count": N}` (`Node.cut(below:)`); on an event stream, only with a window.
    static func depth(_ items: [String: String]) throws -> Int? {
        guard let text = items["depth"] else { return nil }
        guard let depth = Int(text), QueryParams.depths.contains(depth) else {
            throw RESTFailure(status: .badRequest, message: "depth must be a whole number from \(QueryParams.depths.lowerBound) to \(QueryParams.depths.upperBound), not \"\(text)\"")
        }
        if items["shallow"] == "true" { throw RESTFailure(status: .badRequest, message: "depth and shallow cut a value each their own way: give one") }
        return depth
    }

    /// Whether a GET asks how it is answered (`explain=true`) rather than for the data.
    /// Not with `shallow`, which changes the query the explanation would describe; `print`,
    /// `format` and ETags, which shape data, do not apply to an explanation.
    static func explains(_ items: [String: String]) throws -> Bool {
        guard let explain = items["explain"] else { return false }
        guard explain == "true" || explain == "false" else {
            throw RESTFailure(status: .badRequest, message: "explain must be true or false, not \"\(explain.prefix(40))\"")
        }
        if explain == "true" && items["shallow"] == "true" {
            throw RESTFailure(status: .badRequest, message: "explain and shallow cannot both be set")
        }
        return explain == "true"
    }

    /// The write parameters hosted Firebase and the emulator take, checked. `writeSizeLimit`
    /// names how long a write may take there (the server estimates it and refuses longer
    /// ones); writes here are not estimated, so any value is accepted and only the body limit
    /// applies. `disableTriggers` turns off Cloud Functions triggers, which this server has none of.
    static func checkWriteParameters(_ items: [String: String]) throws {
        if let limit = items["writeSizeLimit"], !["tiny", "small", "medium", "large", "unlimited"].contains(limit) {
            throw RESTFailure(status: .badRequest, message: "writeSizeLimit must be tiny, small, medium, large or unlimited, not \"\(limit)\"")
        }
        if let disable = items["disableTriggers"], disable != "true" && disable != "false" {
            throw RESTFailure(status: .badRequest, message: "disableTriggers must be true or false, not \"\(disable)\"")
        }
    }

    /// The REST target (`/users.json`) of an upload's (`/users/.upload`, `/.upload`), if it is
    /// one. Data only: `/.settings/rules/.upload` is not a way to replace the rules.
    static func uploadTarget(_ rawPath: String) throws -> String? {
        if rawPath == "/.upload" { return "/.json" }
        guard rawPath.hasSuffix("/.upload") else { return nil }
        guard !rawPath.hasPrefix("/.") else {
            throw RESTFailure(status: .badRequest, message: "an upload writes data: its path cannot start with a key beginning with '.'")
        }
        return String(rawPath.dropLast("/.upload".count)) + ".json"
    }

    /// Writes always open (and create) their namespace.
    private static func opened(_ database: Database?) throws -> Database {
        guard let database else { throw RESTFailure(status: .internalServerError, message: "the namespace is not open") }
        return database
    }

    private static func etag(_ node: Node) -> String { node.isEmpty ? "null_etag" : node.hashString }

    /// The header of a guarded PATCH, rtdb's own: a JSON object of paths (relative to the
    /// PATCH's location) to the ETags read there ("null_etag" for nothing). Unless each still
    /// matches, nothing is written and the answer is 412, as for a PUT's `if-match`.
    static let guardsHeader = "X-Rtdb-Guards"

    /// The guards of a PATCH's `X-Rtdb-Guards` header, checked.
    static func guards(_ headers: [String]) throws -> [UpdateGuard] {
        let invalid = { (why: String) in RESTFailure(status: .badRequest, message: "Invalid \(guardsHeader) header: \(why)") }
        guard let header = headers.first else { return [] }
        guard headers.count == 1 else { throw invalid("give it once, with every guard in its object") }
        guard case .object(let members)? = try? JSONValue.parse(header) else {
            throw invalid("it is a JSON object of relative paths to ETags, as {\"a/b\": \"ETAG\"}")
        }
        var guards: [UpdateGuard] = []
        for (key, value) in members {
            guard case .string(let etag) = value else { throw invalid("the ETag of \"\(key)\" is not a string") }
            let relative: Path
            do { relative = try Path.validated(key, allowInfo: false) } catch { throw invalid("\"\(key)\": \(error)") }
            guards.append(UpdateGuard(relative, hash: etag == "null_etag" ? "" : etag))
        }
        return guards
    }

    /// A `download=NAME` read's header: the browser saves the answer as NAME. The plain
    /// `filename` keeps ASCII letters, digits, `.`, `-` and `_` (anything else becomes `_`), so
    /// it cannot leave its quotes or name a folder; `filename*` (RFC 6266) carries the name
    /// itself, percent-encoded, for the browsers that read it, which take no folder from it.
    static func attachment(named name: String) -> String {
        let kept = String(name.unicodeScalars.prefix(100))
        var safe = String(kept.unicodeScalars.map { scalar -> Character in
            let ascii = scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar)) || ".-_".unicodeScalars.contains(scalar))
            return ascii ? Character(scalar) : "_"
        })
        if safe.allSatisfy({ $0 == "." || $0 == "_" }) { safe = "data.json" }
        var header = "attachment; filename=\"\(safe)\""
        let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        if safe != kept, !kept.allSatisfy({ $0 == "." }), !kept.contains("/"), !kept.contains("\\"), let encoded = kept.addingPercentEncoding(withAllowedCharacters: unreserved) {
            header += "; filename*=UTF-8''" + encoded
        }
        return header
    }

    /// Reads a request body in place, without a copy. Bytes that are not UTF-8 are refused: the
    /// reader checks every string, and outside strings JSON allows ASCII only.
    private static func parse<T>(_ body: [UInt8], _ read: (UnsafeBufferPointer<UInt8>) throws -> T) throws -> T {
        try body.withUnsafeBufferPointer { try read($0) }
    }

    /// The database path of a REST target's path part (`/users/ada.json`), percent-decoded
    /// and checked with the database's rules.
    static func path(fromTarget rawPath: String) throws -> Path {
        var segments: [String] = []
        for segment in Path.segments(String(rawPath.dropLast(".json".count))) {
            guard let key = segment.removingPercentEncoding else {
                throw RESTFailure(status: .badRequest, message: "Invalid path: a percent-encoded segment is not valid UTF-8")
            }
            segments.append(key)
        }
        let path = Path(keys: segments)
        // `.priority` may end a path: a node's priority is read and written there.
        do { try path.validate(allowPriorityLast: true) } catch { throw RESTFailure(status: .badRequest, message: "Invalid path: \(error)") }
        return path
    }

    /// The request target with credential parameters (`auth`, `access_token`) blanked, for logs.
    static func redacted(_ uri: String) -> String {
        guard let question = uri.firstIndex(of: "?") else { return uri }
        let items = uri[uri.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            let raw = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            // Names are compared as `split` reads them: %61uth is auth too.
            let name = raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? raw
            return ["auth", "access_token", "auth_variable_override"].contains(name) ? raw + "=REDACTED" : String(item)
        }
        return String(uri[..<question]) + "?" + items.joined(separator: "&")
    }

    /// The path and the query parameters of a request target. Empty names (`?=x`) are kept as
    /// they are (no known parameter is empty); a name or value whose percent-encoding is not
    /// valid UTF-8 is kept undecoded, and is then simply not a known parameter.
    static func split(_ uri: String) -> (String, [String: String]) {
        guard let q = uri.firstIndex(of: "?") else { return (uri, [:]) }
        var items: [String: String] = [:]
        for pair in uri[uri.index(after: q)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                .map { String($0).replacingOccurrences(of: "+", with: " ") }
            guard let first = parts.first else { continue }
            let name = first.removingPercentEncoding ?? first
            let value = parts.count > 1 ? parts[1] : ""
            items[name] = value.removingPercentEncoding ?? value
        }
        return (String(uri[..<q]), items)
    }

    /// The namespace a `Host` header names (`demo.localhost:9000` → demo), as clients read it.
    static func namespace(fromHost header: String?) -> String {
        header.map { HostName.namespace(of: HostName.name(ofHostHeader: $0)) } ?? "default"
    }
}
