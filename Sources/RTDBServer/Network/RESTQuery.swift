import RTDBData

/// Query parameters of a REST request: orderBy as a JSON string, bounds as JSON values
/// optionally followed by `,"key"`, limits as integers.
enum RESTQuery {
    struct Failure: Error { let message: String }

    /// The bounds and limits; with `orderBy`, every query parameter.
    static let filters = ["startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast"]
    static let parameters = ["orderBy"] + filters

    static func params(_ items: [String: String]) throws -> QueryParams? {
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
            params = params.bound(named: name, value, key: key)!
        }
        for name in ["limitToFirst", "limitToLast"] {
            guard let text = items[name] else { continue }
            guard let n = Int(text), n > 0 else { throw Failure(message: "\(name) must be a positive integer") }
            if params.limit != nil { throw Failure(message: "limitToFirst and limitToLast cannot both be set") }
            params = name == "limitToFirst" ? params.limitToFirst(n) : params.limitToLast(n)
        }
        return params
    }

    /// `5`, `"a"`, or `5,"key"` (the key part as the official clients write it).
    static func bound(_ text: String, _ name: String) throws -> (Node, String?) {
        if let value = try? JSONValue.parse(text), let node = scalar(value) { return (node, nil) }
        var index = text.endIndex
        while let comma = text[..<index].lastIndex(of: ",") {
            if let value = try? JSONValue.parse(String(text[..<comma])), let node = scalar(value),
               case .string(let key)? = try? JSONValue.parse(String(text[text.index(after: comma)...])) {
                let sentinel = key == ChildKey.min.name || key == ChildKey.max.name
                return (node, sentinel ? nil : key)
            }
            index = comma
        }
        throw Failure(message: "\(name) must be a JSON string, number, boolean or null, optionally followed by a JSON string key")
    }

    private static func scalar(_ value: JSONValue) -> Node? {
        switch value {
        case .array, .object: return nil
        default: return Node(json: value)
        }
    }
}
