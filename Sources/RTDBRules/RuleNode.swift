import RTDBData

/// The rules at one level of the tree: its own `.read`, `.write`, `.validate` and
/// `.indexOn`, its named children, and at most one `$wildcard` for the other children.
final class RuleNode: Sendable {
    let read: Rule?
    let write: Rule?
    let validate: Rule?
    let indexOn: [String]
    let children: [String: RuleNode]
    let wildcard: (name: String, node: RuleNode)?
    /// Whether a write's rules here or below can look at the data it leaves: a `.validate`,
    /// or `newData` in a `.write`. Where none can, a write is judged without making it first.
    let writesReadNewData: Bool

    init(read: Rule?, write: Rule?, validate: Rule?, indexOn: [String],
         children: [String: RuleNode], wildcard: (name: String, node: RuleNode)?) {
        self.read = read
        self.write = write
        self.validate = validate
        self.indexOn = indexOn
        self.children = children
        self.wildcard = wildcard
        writesReadNewData = validate != nil || write?.term.mentions(anyOf: [.newData]) == true
            || children.values.contains { $0.writesReadNewData } || wildcard?.node.writesReadNewData == true
    }

    /// The rules for `key` below this level; a named child wins over the wildcard, which
    /// binds its variable.
    func child(_ key: String, binding variables: inout [(name: String, value: String)]) -> RuleNode? {
        if let named = children[key] { return named }
        guard let wildcard else { return nil }
        variables.append((wildcard.name, key))
        return wildcard.node
    }

    func rule(_ kind: RuleKind) -> Rule? {
        switch kind {
        case .read: return read
        case .write: return write
        case .validate: return validate
        }
    }

    /// Builds one level from the file, checking each rule with the `$` variables in scope.
    /// `location`: the keys down to it, wildcards by name; `ids`: the number of the next term.
    static func build(_ text: RulesText, bound: Set<String>, location: [String], ids: inout Int) throws(RuleSyntaxError) -> RuleNode {
        guard case .object(let members, _) = text else {
            throw RuleSyntaxError("rules for a location must be an object, not \(text.kindName)", at: text.offset)
        }
        var rules: [RuleKind: Rule] = [:]
        var indexOn: [String] = []
        var children: [String: RuleNode] = [:]
        var wildcard: (name: String, node: RuleNode)?
        for member in members {
            if let kind = RuleKind(rawValue: member.key) {
                rules[kind] = try rule(member.value, kind: kind, bound: bound, location: location, ids: &ids)
            } else if member.key == ".indexOn" {
                indexOn = try names(member.value)
            } else if member.key.hasPrefix(".") {
                throw RuleSyntaxError("unknown rule \"\(member.key)\"; a location may have .read, .write, .validate and .indexOn", at: member.keyOffset)
            } else if member.key.hasPrefix("$") {
                let name = member.key
                guard name.count > 1, Path.problem(with: String(name.dropFirst())) == nil else {
                    throw RuleSyntaxError("\"\(name)\" is not a valid wildcard name", at: member.keyOffset)
                }
                if let other = wildcard {
                    throw RuleSyntaxError("two wildcards at one location (\(other.name) and \(name)); only one is allowed", at: member.keyOffset)
                }
                if bound.contains(name) {
                    throw RuleSyntaxError("the wildcard \(name) is already used above this location", at: member.keyOffset)
                }
                wildcard = (name, try build(member.value, bound: bound.union([name]), location: location + [name], ids: &ids))
            } else {
                if let problem = Path.problem(with: member.key) {
                    throw RuleSyntaxError("\"\(member.key)\" is not a valid key: \(problem)", at: member.keyOffset)
                }
                children[member.key] = try build(member.value, bound: bound, location: location + [member.key], ids: &ids)
            }
        }
        return RuleNode(read: rules[.read], write: rules[.write], validate: rules[.validate], indexOn: indexOn,
                        children: children, wildcard: wildcard)
    }

    private static func rule(_ text: RulesText, kind: RuleKind, bound: Set<String>, location: [String],
                             ids: inout Int) throws(RuleSyntaxError) -> Rule {
        let place = "/" + location.joined(separator: "/")
        switch text {
        case .bool(let value, _):
            defer { ids += 1 }
            let term = RuleTerm(expression: .constant(.bool(value)), span: 0..<(value ? 4 : 5), id: ids)
            return Rule(location: place, kind: kind, text: value ? "true" : "false", term: term)
        case .string(let source, let offsets, let offset):
            do {
                let term = try RuleParser.parse(source, kind: kind, bound: bound, ids: &ids)
                return Rule(location: place, kind: kind, text: source, term: term)
            } catch {
                // Map the offset inside the expression back to the file.
                let inFile = offsets.indices.contains(error.offset) ? offsets[error.offset] : (offsets.last.map { $0 + 1 } ?? offset + 1)
                throw RuleSyntaxError("in \(kind.rawValue): \(error.message)", at: inFile)
            }
        default:
            throw RuleSyntaxError("\(kind.rawValue) must be true, false or an expression in a string, not \(text.kindName)", at: text.offset)
        }
    }

    private static func names(_ text: RulesText) throws(RuleSyntaxError) -> [String] {
        switch text {
        case .string(let name, _, _): return [name]
        case .array(let items, _):
            var names: [String] = []
            for item in items {
                guard case .string(let name, _, _) = item else {
                    throw RuleSyntaxError(".indexOn lists child names as strings", at: item.offset)
                }
                names.append(name)
            }
            return names
        default: throw RuleSyntaxError(".indexOn must be a child name or an array of them", at: text.offset)
        }
    }
}
