import NIOHTTP1
import RTDBData
import RTDBEngine
import RTDBRules

/// What the REST router decided for one request: an answer, or an event stream to start.
enum RESTOutcome: Sendable {
    case reply(RESTReply)
    /// `Accept: text/event-stream`: the namespace stays acquired until the stream ends.
    case stream(Database, namespace: String, Path, QueryParams?, Identity, export: Bool)
    /// The profiler's stream of the namespace's operations; acquired until it ends.
    case profile(Database, namespace: String)
}

/// One REST answer: its status, body (JSON unless said) and extra headers.
struct RESTReply: Sendable {
    var status: HTTPResponseStatus
    var body: [UInt8]
    var headers: [(String, String)] = []
    /// What went wrong, for the server's log.
    var problem: String?
    var contentType = "application/json; charset=utf-8"

    /// `{"error": message}` with `status`.
    static func error(_ status: HTTPResponseStatus, _ message: String) -> RESTReply {
        RESTReply(status: status, body: errorBody(message), problem: message)
    }

    static func errorBody(_ message: String) -> [UInt8] {
        Array(JSONValue.object([("error", .string(message))]).serialized().utf8)
    }
}

/// A request the router refuses, with the status and message the client gets.
struct RESTFailure: Error {
    let status: HTTPResponseStatus
    let message: String
}
