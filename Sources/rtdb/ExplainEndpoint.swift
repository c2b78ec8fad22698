import RTDBData
import RTDBProtocol
import RTDBServer
import RTDBTransport

/// `explain` as a client asks it of rtdb serve or of a folder's owner: a GET of the location
/// with the query's REST parameters and `explain=true`, answered with a `QueryExplanation`.
enum ExplainEndpoint {
    /// The REST target, without the namespace and credential the caller adds.
    static func target(_ path: Path, _ query: QueryParams?) -> String {
        let location = "/" + path.keys.map(encoded).joined(separator: "/") + ".json"
        let items = (query.map(RESTQuery.items(for:)) ?? []) + [(name: "explain", value: "true")]
        return location + "?" + items.map { $0.name + "=" + encoded($0.value) }.joined(separator: "&")
    }

    /// The explanation `answer` holds; why there is none when it holds none.
    static func explanation(_ answer: HTTPClient.Answer, server: String) throws -> QueryExplanation {
        let json = try? JSONValue.parse(answer.text)
        guard answer.status == 200 else {
            throw RemoteError("\(server) refused: \(json?["error"]?.string ?? "HTTP \(answer.status)")")
        }
        guard let json, let explanation = QueryExplanation(json: json) else {
            throw RemoteError("\(server) did not explain the query (rtdb serve and an embedded database do; hosted Firebase and its emulator do not)")
        }
        return explanation
    }

    /// Every byte but the unreserved ASCII ones (RFC 3986) as %XX, so keys and JSON values
    /// of any kind go through a URL unchanged.
    static func encoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out
    }
}
