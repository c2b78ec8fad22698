import RTDBData

/// A request put to the rules without being made (`rules check`, the console's Rules
/// Playground): a read, a write or a multi-path update at `path`, by whoever `credential`
/// names, under the database's rules or the ones given.
public struct RuleQuestion: Sendable {
    public enum Operation: Sendable {
        case read
        case write(Node)
        /// Values by path under `path`, as `update` takes them.
        case update([(Path, Node)])

        public var name: String {
            switch self {
            case .read: return "read"
            case .write: return "write"
            case .update: return "update"
            }
        }
    }

    public var path: Path
    public var operation: Operation
    /// Whom the rules see: a credential as a client sends it (an ID token, `owner`); nil for
    /// no one.
    public var credential: String?
    /// Rules to judge by instead of the database's, as text (`rules check --rules FILE`).
    public var rules: String?

    public init(path: Path, operation: Operation, credential: String?, rules: String? = nil) {
        self.path = path
        self.operation = operation
        self.credential = credential
        self.rules = rules
    }

    /// A question that cannot be asked: a bad path or value, a credential that names no one.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// The question as a server takes it (`POST /.settings/rules/check.json`):
    /// `{"operation": "write", "path": "/a", "value": …, "credential": …, "rules": …}`;
    /// server values (`{".sv": …}`) and priorities are kept.
    public var body: [UInt8] {
        var out = Array(#"{"operation":"#.utf8) + Array(JSONValue.string(operation.name).serialized().utf8)
        out += Array(#","path":"#.utf8) + Array(JSONValue.string(path.description).serialized().utf8)
        func value(_ node: Node) -> [UInt8] { JSONWriter.bytes(node, options: .init(export: true)) }
        switch operation {
        case .read: break
        case .write(let node): out += Array(#","value":"#.utf8) + value(node)
        case .update(let entries):
            out += Array(#","value":{"#.utf8)
            for (i, (relative, node)) in entries.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                out += Array(JSONValue.string(relative.description).serialized().utf8) + [UInt8(ascii: ":")] + value(node)
            }
            out.append(UInt8(ascii: "}"))
        }
        out += Array(#","credential":"#.utf8) + Array((credential.map(JSONValue.string) ?? .null).serialized().utf8)
        if let rules { out += Array(#","rules":"#.utf8) + Array(JSONValue.string(rules).serialized().utf8) }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Reads a question from a request's body, checking its path and values as a write's.
    public init(body: [UInt8]) throws(Invalid) {
        guard let text = String(validating: body, as: UTF8.self), let json = try? JSONValue.parse(text), json.members != nil else {
            throw Invalid("the body must be a JSON object: {\"operation\": \"read\", \"path\": \"/a\", …}")
        }
        let kind = json["operation"]?.string
        guard let kind, ["read", "write", "update"].contains(kind) else { throw Invalid("\"operation\" must be \"read\", \"write\" or \"update\"") }
        guard let location = json["path"]?.string else { throw Invalid("\"path\" must be a string, as \"/users/ada\"") }
        let path = Path(location)
        let value = json["value"]
        switch kind {
        case "read":
            operation = .read
        case "write":
            guard let value else { throw Invalid("a write needs its \"value\" (null to remove)") }
            do { operation = .write(try JSONReader.parse(value.serialized(), options: .init(base: path))) } catch {
                throw Invalid("\"value\": \(error)")
            }
        case "update":
            guard let value, value.members != nil else { throw Invalid("an update needs a \"value\" object of paths and values") }
            do { operation = .update(try JSONReader.parseUpdate(value.serialized(), base: path)) } catch {
                throw Invalid("\"value\": \(error)")
            }
        default:
            throw Invalid("\"operation\" must be \"read\", \"write\" or \"update\"")
        }
        self.path = path
        switch json["credential"] {
        case nil, .null?: credential = nil
        case .string(let token)?: credential = token
        default: throw Invalid("\"credential\" must be a string or null")
        }
        switch json["rules"] {
        case nil, .null?: rules = nil
        case .string(let text)?: rules = text
        default: throw Invalid("\"rules\" must be the rules' text, a string")
        }
    }
}
