import RTDBData

/// Query parameters of a REST request: orderBy as a JSON string, bounds as JSON values
/// optionally followed by `,"key"`, limits as integers. The server reads them (`params`),
/// the shell writes them (`items`) to ask rtdb serve about a query.
public enum RESTQuery {
    public struct Failure: Error, Sendable { public let message: String }

    /// The bounds and limits; with `orderBy`, every query parameter.
    public static let filters = ["startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast"]
    static let parameters = ["orderBy"] + filters

    /// The query `items` ask for; nil for none.
    public static func params(_ items: [String: String]) throws -> QueryParams? {
        let present = filters.filter { items[$0] != nil }
        guard let orderByText = items["orderBy"] else {
            if !present.isEmpty { throw Failure(message: "orderBy must be defined when other query parameters are defined") }
            return nil
        }
        guard case .string(let orderBy)? = try? JSONValue.parse(orderByText) else {
            throw Failure(message: "orderBy must be a valid JSON encoded path")
        }
        var params = QueryParams()
        switch orderBy {
        case "$key": params = params.ordered(by: .key)
        case "$value": params = params.ordered(by: .value)
        case "$priority": params = params.ordered(by: .priority)
        default:
            let path = Path(orderBy)
            if path.isRoot || path.keys.contains(where: { Path.problem(with: $0) != nil }) {
                throw Failure(message: "orderBy must be a valid JSON encoded path")
            }
            params = params.ordered(by: .child(path))
        }
        for name in ["startAt", "startAfter", "endAt", "endBefore", "equalTo"] {
            guard let text = items[name] else { continue }
            let (value, key) = try bound(text, name)
            guard let bounded = params.bound(named: name, value, key: key) else { throw Failure(message: "\(name) is not a query bound") }
            params = bounded
        }
        for name in ["limitToFirst", "limitToLast"] {
            guard let text = items[name] else { continue }
            guard let n = Int(text), n > 0, n <= Int(Int32.max) else {
                throw Failure(message: "\(name) must be a positive integer of at most \(Int32.max)")
            }
            if params.limit != nil { throw Failure(message: "limitToFirst and limitToLast cannot both be set") }
            params = name == "limitToFirst" ? params.limitToFirst(n) : params.limitToLast(n)
        }
        return params
    }

    /// The parameters that ask for `params`, as `params(_:)` reads them back (unencoded: the
    /// caller percent-encodes them into a URL). None for the default query. A limit beyond
    /// what REST takes is its largest: no list is that long, so the answer is the same.
    public static func items(for params: QueryParams) -> [(name: String, value: String)] {
        guard !params.isDefault else { return [] }
        let orderBy: String
        switch params.index {
        case .key: orderBy = "$key"
        case .value: orderBy = "$value"
        case .priority: orderBy = "$priority"
        case .child(let path): orderBy = path.wireString
        }
        var items = [(name: "orderBy", value: JSONValue.string(orderBy).serialized())]
        func bound(_ bound: QueryParams.Bound) -> String {
            bound.value.plainJSON.serialized() + (bound.key.map { "," + JSONValue.string($0).serialized() } ?? "")
        }
        if let start = params.start { items.append((start.inclusive ? "startAt" : "startAfter", bound(start))) }
        if let end = params.end { items.append((end.inclusive ? "endAt" : "endBefore", bound(end))) }
        if let limit = params.limit {
            items.append((params.isViewFromLeft ? "limitToFirst" : "limitToLast", String(min(limit, Int(Int32.max)))))
        }
        return items
    }

    /// `5`, `"a"`, or `5,"key"` (the key part as the official clients write it). Read in one
    /// pass: the value, then optionally a comma and a JSON string. A key of `[MIN_NAME]` or
    /// `[MAX_NAME]` that is where the bound sits without one is none; the other one is kept
    /// (`startAt=5,"[MAX_NAME]"` starts after every child of value 5).
    static func bound(_ text: String, _ name: String) throws -> (Node, String?) {
        var text = text
        let parsed: (Node, String?)? = text.withUTF8 { bytes in
            guard let (value, end) = try? JSONValue.parsePrefix(bytes: bytes), let node = scalar(value) else { return nil }
            var i = end
            while i < bytes.count, bytes[i] == 0x20 { i += 1 }
            if i == bytes.count { return (node, nil) }
            guard bytes[i] == UInt8(ascii: ","),
                  case .string(let key)? = try? JSONValue.parse(bytes: UnsafeBufferPointer(rebasing: bytes[(i + 1)...]), capturing: nil).value
            else { return nil }
            return (node, key == defaultKey(of: name) ? nil : key)
        }
        guard let parsed else {
            throw Failure(message: "\(name) must be a JSON string, number, boolean or null, optionally followed by a JSON string key")
        }
        return parsed
    }

    /// Where a bound named `name` sits among the children of its value when it has no key.
    private static func defaultKey(of name: String) -> String? {
        switch name {
        case "startAt", "endBefore": return ChildKey.min.name
        case "endAt", "startAfter": return ChildKey.max.name
        default: return nil
        }
    }

    private static func scalar(_ value: JSONValue) -> Node? {
        switch value {
        case .array, .object: return nil
        default: return Node(json: value)
        }
    }
}
