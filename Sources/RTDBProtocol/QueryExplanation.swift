import RTDBData

/// How the database answered one read (`get --explain`, `query --explain`, and a REST GET
/// with `explain=true`): which index ordered the children, how many children it read, how
/// long it took, and the `.indexOn` the rules lack for it. Sent as a JSON object:
///
///     {"path": "/rooms/a/messages", "rules": "/rooms/$room/messages", "index": "sent",
///      "use": "built", "declared": false, "unindexed": true, "children": 1000, "ordered": 1000,
///      "returned": 20, "micros": 412, "listens": 0, "indexOn": ["author", "sent"]}
public struct QueryExplanation: Sendable, Equatable {
    /// Where the children's order came from.
    public enum Use: String, Sendable {
        /// No query, or one with neither a limit nor a range: the whole location is read, and
        /// a client orders it (as Firebase's clients do).
        case whole
        /// Key order: the children's own, no index needed.
        case keyOrder = "key-order"
        /// An index kept from an earlier query or a listen answered.
        case kept
        /// An index stored with the data (at the last checkpoint) answered.
        case stored
        /// No usable index was kept: this read built one, by ordering every child (and kept it).
        case built
    }

    public let path: String
    /// Where the rules for `path` are written: a `$wildcard` at each level the rules reach
    /// through one, the data's own keys below where they stop.
    public let rules: String
    /// The ordering as `.indexOn` names it (`age`, `a/b`, `.value`), `.key` or `.priority`;
    /// nil without a query.
    public let index: String?
    public let use: Use
    /// Whether the rules' `.indexOn` at the location names the index.
    public let declared: Bool
    /// Whether the server warns of the query (`no_index`) as it warns of a listen of it:
    /// ordered by a child or by value with a limit or a range, the rules given and not
    /// declaring it. (Without a limit or a range, clients read the whole location instead.)
    public let unindexed: Bool
    /// The children at the location.
    public let children: Int
    /// The children this read put in order to build the index (all of them, or none).
    public let ordered: Int
    /// The children in the answer.
    public let returned: Int
    /// The time on the server, in microseconds.
    public let micros: Int
    /// The listens using the index now: it is kept while there are any.
    public let listens: Int
    /// For a query ordered by a child or by value that the rules give no `.indexOn`: the
    /// whole `.indexOn` to write at `rules`, what is declared there already first.
    public let indexOn: [String]?

    public init(path: String, rules: String, index: String?, use: Use, declared: Bool, unindexed: Bool, children: Int, ordered: Int,
                returned: Int, micros: Int, listens: Int, indexOn: [String]?) {
        self.path = path
        self.rules = rules
        self.index = index
        self.use = use
        self.declared = declared
        self.unindexed = unindexed
        self.children = children
        self.ordered = ordered
        self.returned = returned
        self.micros = micros
        self.listens = listens
        self.indexOn = indexOn
    }

    /// The children read: those ordered to build the index and those answered.
    public var read: Int { ordered.addingSaturated(returned) }

    /// An `.indexOn` rule as it is written: one name alone as a string, several as a list.
    public static func rule(_ names: [String]) -> String {
        let quoted = names.map { JSONValue.string($0).serialized() }
        return "\".indexOn\": " + (quoted.count == 1 ? quoted[0] : "[" + quoted.joined(separator: ", ") + "]")
    }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("path", .string(path)), ("rules", .string(rules)), ("index", index.map(JSONValue.string) ?? .null),
                                              ("use", .string(use.rawValue)), ("declared", .bool(declared)),
                                              ("unindexed", .bool(unindexed)), ("children", .number(Double(children))),
                                              ("ordered", .number(Double(ordered))), ("returned", .number(Double(returned))),
                                              ("micros", .number(Double(micros))), ("listens", .number(Double(listens)))]
        if let indexOn { members.append(("indexOn", .array(indexOn.map(JSONValue.string)))) }
        return .object(members)
    }

    /// The explanation `json` describes; nil when it is not one (a server that took
    /// `explain=true` for something else answers with data).
    public init?(json: JSONValue) {
        guard let path = json["path"]?.string, let rules = json["rules"]?.string,
              let useName = json["use"]?.string, let use = Use(rawValue: useName),
              let declared = json["declared"]?.bool, let unindexed = json["unindexed"]?.bool,
              let children = json["children"]?.int, let ordered = json["ordered"]?.int, let returned = json["returned"]?.int,
              let micros = json["micros"]?.int, let listens = json["listens"]?.int,
              [children, ordered, returned, micros, listens].allSatisfy({ $0 >= 0 })
        else { return nil }
        let index: String?
        switch json["index"] {
        case .string(let name)?: index = name
        case .null?: index = nil
        default: return nil
        }
        var indexOn: [String]?
        switch json["indexOn"] {
        case nil, .null?:
            break
        case .array(let names)?:
            let list = names.compactMap(\.string)
            guard list.count == names.count, !list.isEmpty else { return nil }
            indexOn = list
        default:
            return nil
        }
        self.init(path: path, rules: rules, index: index, use: use, declared: declared, unindexed: unindexed, children: children,
                  ordered: ordered, returned: returned, micros: micros, listens: listens, indexOn: indexOn)
    }
}
