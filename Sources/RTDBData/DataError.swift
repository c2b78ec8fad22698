/// Why a path, key or value was refused. Messages name the offending part so a user can fix it.
public enum DataError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidKey(key: String, path: String, reason: String)
    case pathTooLong(path: String, bytes: Int)
    case pathTooDeep(path: String, depth: Int)
    case readOnlyPath(String)
    case invalidValue(path: String, reason: String)
    case invalidPriority(path: String, reason: String)
    case stringTooLong(path: String, bytes: Int)
    case writeTooLarge(bytes: Int, limit: Int)

    public var description: String {
        switch self {
        case let .invalidKey(key, path, reason):
            return "invalid key \(Self.quote(key)) in \(Self.quote(path)): \(reason)"
        case let .pathTooLong(path, bytes):
            return "path \(Self.quote(Self.abbreviate(path))) is \(bytes) bytes long; the limit is \(Path.maxBytes)"
        case let .pathTooDeep(path, depth):
            return "path \(Self.quote(Self.abbreviate(path))) is \(depth) levels deep; the limit is \(Path.maxDepth)"
        case let .readOnlyPath(path):
            return "\(Self.quote(path)) is read-only: /.info is maintained by the client"
        case let .invalidValue(path, reason):
            return "invalid value at \(Self.quote(path)): \(reason)"
        case let .invalidPriority(path, reason):
            return "invalid priority at \(Self.quote(path)): \(reason)"
        case let .stringTooLong(path, bytes):
            return "string at \(Self.quote(path)) is \(bytes) bytes; the limit is \(Node.maxStringBytes) (10 MiB)"
        case let .writeTooLarge(bytes, limit):
            return "the write is \(bytes) bytes; the limit is \(limit)"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func abbreviate(_ s: String) -> String {
        s.count > 80 ? String(s.prefix(77)) + "..." : s
    }
}

extension String {
    /// The string padded on the left to `width` characters (zeros unless told otherwise).
    public func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
