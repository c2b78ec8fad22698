import RTDBData
import RTDBProtocol
import RTDBTransport

/// `explain` as a client asks it of rtdb serve or of a folder's owner: a GET of the location
/// with the query's REST parameters and `explain=true`, answered with a `QueryExplanation`.
enum ExplainEndpoint {
    /// The REST target, without the namespace and credential the caller adds. With
    /// `print=silent`, which an explanation ignores: a server that does not explain (hosted
    /// Firebase) answers with no data rather than the whole location.
    static func target(_ path: Path, _ query: QueryParams?) -> String {
        let location = "/" + path.keys.map(PercentEncoding.encode).joined(separator: "/") + ".json"
        let items = (query.map(RESTQuery.items(for:)) ?? []) + [(name: "explain", value: "true"), (name: "print", value: "silent")]
        return location + "?" + items.map { $0.name + "=" + PercentEncoding.encode($0.value) }.joined(separator: "&")
    }

    static let notExplained = "rtdb serve and an embedded database explain reads; hosted Firebase and its emulator do not"

    /// The explanation `answer` holds; why there is none when it holds none.
    static func explanation(_ answer: HTTPClient.Answer, server: String) throws -> QueryExplanation {
        let json = try? JSONValue.parse(answer.text)
        switch answer.status {
        case 200, 204:
            guard let json, let explanation = QueryExplanation(json: json) else {
                throw RemoteError("\(server) did not explain the read (\(notExplained))")
            }
            return explanation
        case 401:
            throw RemoteError("\(server) refused: \(json?["error"]?.string ?? "Permission denied")")
        default:
            // Hosted Firebase refuses some queries (one it has no index for) where rtdb serve
            // would have explained them.
            throw RemoteError("\(server) refused: \(json?["error"]?.string ?? "HTTP \(answer.status)") (\(notExplained))")
        }
    }
}
