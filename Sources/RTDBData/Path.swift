/// A location in the tree: a list of keys from the root.
///
/// `Path` itself only splits and joins; `validated…` initialisers apply the database's rules
/// (forbidden characters, 768 bytes, depth 32) and name the offending segment when they fail.
public struct Path: Hashable, Sendable, CustomStringConvertible, Comparable {
    public static let maxBytes = 768
    public static let maxDepth = 32

    public private(set) var keys: [String]

    public init(keys: [String] = []) { self.keys = keys }

    /// Splits on "/" and drops empty segments, without validating ("" and "/" are the root).
    /// Splits on the byte, not on characters: a "/" followed by a combining mark is one
    /// character to Swift but still a separator to the database.
    public init(_ string: String) {
        keys = Path.segments(string)
    }

    /// The "/"-separated, non-empty segments of `string`.
    public static func segments(_ string: String) -> [String] {
        string.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map { String(decoding: $0, as: UTF8.self) }
    }

    public static let root = Path()

    public var isRoot: Bool { keys.isEmpty }
    public var count: Int { keys.count }
    public var first: String? { keys.first }
    public var last: String? { keys.last }

    public var parent: Path? {
        keys.isEmpty ? nil : Path(keys: Array(keys.dropLast()))
    }

    public func child(_ key: String) -> Path { Path(keys: keys + [key]) }

    public func appending(_ other: Path) -> Path { Path(keys: keys + other.keys) }

    public func dropFirst(_ n: Int = 1) -> Path { Path(keys: Array(keys.dropFirst(n))) }

    /// True when `self` is `other` or above it.
    public func contains(_ other: Path) -> Bool {
        keys.count <= other.keys.count && other.keys.starts(with: keys)
    }

    /// True when either path is the other or above it: a change at one is seen at the other.
    public func overlaps(_ other: Path) -> Bool { contains(other) || other.contains(self) }

    /// `other` relative to `self`, when `self` contains it.
    public func relative(to ancestor: Path) -> Path? {
        ancestor.contains(self) ? Path(keys: Array(keys.dropFirst(ancestor.count))) : nil
    }

    /// "/a/b", or "/" for the root.
    public var description: String { "/" + keys.joined(separator: "/") }

    /// "a/b", or "" for the root: the form servers use in pushes.
    public var wireString: String { keys.joined(separator: "/") }

    public var utf8Length: Int {
        keys.reduce(0) { $0 + $1.utf8.count } + Swift.max(0, keys.count - 1)
    }

    public var isInfo: Bool { keys.first == ".info" }

    public static func < (a: Path, b: Path) -> Bool {
        for (x, y) in zip(a.keys, b.keys) where x != y {
            return ChildKey.compare(ChildKey(x), ChildKey(y)) < 0
        }
        return a.keys.count < b.keys.count
    }

    // MARK: Validation

    /// Checks one key against the database's rules; `path` is only for the message.
    public static func validate(key: String, in path: @autoclosure () -> String) throws {
        if let reason = problem(with: key) {
            throw DataError.invalidKey(key: key, path: path(), reason: reason)
        }
    }

    /// Why `key` is not a valid key, or nil when it is.
    public static func problem(with key: String) -> String? { problem(utf8: key.utf8) }

    /// Why the key spelled by these UTF-8 bytes is not a valid key, or nil when it is.
    static func problem<Bytes: Collection<UInt8>>(utf8 key: Bytes) -> String? {
        if key.isEmpty { return "keys must not be empty" }
        for byte in key {
            switch byte {
            case UInt8(ascii: "."), UInt8(ascii: "$"), UInt8(ascii: "#"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "/"):
                return "keys must not contain \".\", \"$\", \"#\", \"[\", \"]\" or \"/\" (found \"\(Character(Unicode.Scalar(byte)))\")"
            case 0..<0x20, 0x7F:
                return "keys must not contain control characters (found U+\(String(byte, radix: 16, uppercase: true).leftPadded(to: 4)))"
            default: continue
            }
        }
        return nil
    }

    /// Parses and validates a path typed or received. `.info` is accepted as the first segment
    /// only; `allowInfo: false` refuses it (for writes).
    public static func validated(_ string: String, allowInfo: Bool = true) throws -> Path {
        let path = Path(string)
        try path.validate(allowInfo: allowInfo)
        return path
    }

    /// `allowPriorityLast`: a write may name `.priority` as its last key (setPriority).
    public func validate(allowInfo: Bool = true, allowPriorityLast: Bool = false) throws {
        for (i, key) in keys.enumerated() {
            if i == 0 && key == ".info" {
                if !allowInfo { throw DataError.readOnlyPath(description) }
                continue
            }
            if allowPriorityLast && key == ".priority" && i == keys.count - 1 { continue }
            try Path.validate(key: key, in: description)
        }
        try validateSize()
    }

    public func validateSize() throws {
        if keys.count > Path.maxDepth { throw DataError.pathTooDeep(path: description, depth: keys.count) }
        let bytes = utf8Length
        if bytes > Path.maxBytes { throw DataError.pathTooLong(path: description, bytes: bytes) }
    }
}
