import RTDBData

/// A place in the database a rule reads, as far as its text tells: keys from the root, each
/// known or not (nil: a key computed from the data). A rule whose path goes on in a way its
/// text does not tell (a child path computed from the data) reads at most what is below the
/// known part, so the pattern stops there.
public struct ReadPattern: Sendable, Equatable, CustomStringConvertible {
    public let keys: [String?]
    /// Past its keys the path goes on to a depth the text does not tell: keys named after
    /// that point are not known to follow these.
    var open = false

    init(keys: [String?], open: Bool = false) {
        self.keys = keys
        self.open = open
    }

    func appending(_ more: [String?]) -> ReadPattern { open ? self : ReadPattern(keys: keys + more) }

    /// Whether a write at `path` can change what the rule reads here: the write is at, above
    /// or below it.
    public func isTouched(by path: Path) -> Bool {
        zip(keys, path.keys).allSatisfy { known, key in known == nil || known == key }
    }

    public var description: String { "/" + (keys.map { $0 ?? "*" } + (open ? ["…"] : [])).joined(separator: "/") }
}

extension RuleTerm {
    /// Where the expression reads the database, for a rule at `location` (concrete keys)
    /// with its wildcards bound to `variables`. What cannot be told from the text reads
    /// everything (the root's pattern), so the result is never narrower than the truth.
    func readPatterns(at location: [String], _ variables: [(name: String, value: String)]) -> [ReadPattern] {
        var found: [ReadPattern] = []
        collectReads(into: &found, location, variables)
        return found
    }

    private func collectReads(into found: inout [ReadPattern], _ location: [String], _ variables: [(name: String, value: String)]) {
        switch expression {
        case .constant, .bound, .variable: break
        case .call(let base, let method, let arguments):
            // Navigation alone reads nothing; what a snapshot is asked reads it.
            if method.onSnapshot && method != .child && method != .parent {
                found.append(base.snapshotPattern(location, variables) ?? ReadPattern(keys: []))
            }
            base.collectReads(into: &found, location, variables)
            for argument in arguments { argument.collectReads(into: &found, location, variables) }
        case .hasChild(let base, let relative):
            let at = base.snapshotPattern(location, variables)
            found.append(at?.appending(relative.keys) ?? ReadPattern(keys: []))
            base.collectReads(into: &found, location, variables)
        case .array(let items):
            for item in items { item.collectReads(into: &found, location, variables) }
        case .member(let base, _), .child(let base, _), .not(let base), .negate(let base):
            base.collectReads(into: &found, location, variables)
        case .index(let a, let b), .and(let a, let b), .or(let a, let b), .binary(_, let a, let b):
            a.collectReads(into: &found, location, variables)
            b.collectReads(into: &found, location, variables)
        case .conditional(let a, let b, let c):
            for part in [a, b, c] { part.collectReads(into: &found, location, variables) }
        }
    }

    /// The place of a snapshot expression, as far as the text tells; nil when it is not one
    /// the text can place (the caller then takes the root).
    private func snapshotPattern(_ location: [String], _ variables: [(name: String, value: String)]) -> ReadPattern? {
        switch expression {
        case .variable(.root): return ReadPattern(keys: [])
        case .variable(.data), .variable(.newData): return ReadPattern(keys: location)
        case .child(let base, let relative):
            return base.snapshotPattern(location, variables)?.appending(relative.keys)
        case .call(let base, .child, let arguments):
            guard let at = base.snapshotPattern(location, variables) else { return nil }
            switch arguments.first?.expression {
            case .constant(.string(let text))?: return at.appending(Path(text).keys)
            case .bound(let name)?:
                // A `$` variable is one key, known for this listen's location.
                return at.appending([variables.last { $0.name == name }?.value])
            default: return ReadPattern(keys: at.keys, open: true)  // computed: somewhere below
            }
        case .call(let base, .parent, _):
            guard let at = base.snapshotPattern(location, variables), !at.open, !at.keys.isEmpty else { return nil }
            return ReadPattern(keys: Array(at.keys.dropLast()))
        default: return nil
        }
    }
}
