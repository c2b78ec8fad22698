import RTDBData
import Synchronization

/// How often each term of a rules file was evaluated and what it gave, over every request
/// since the rules were set: the emulator's coverage report (`/.inspect/coverage`). Every
/// thread that evaluates the rules counts here, once per request. Counting runs on every
/// request whether or not anyone reads the report, so it keeps what a term gave as a small
/// mark (a scalar by value, anything else by its kind), described only in a report.
public final class RuleCoverage: Sendable {
    /// One term's counts, as a report shows them.
    public struct Tally: Sendable, Equatable {
        public var evaluations = 0
        /// What it gave, as a trace shows values, with how many times: at most
        /// `RuleCoverage.distinctValues` of them besides true and false; the rest are
        /// counted in `otherValues`.
        public var values: [String: Int] = [:]
        public var otherValues = 0
        /// How many times it could not be evaluated, and the last reason.
        public var errors = 0
        public var lastError: String?

        public init(evaluations: Int = 0, values: [String: Int] = [:], otherValues: Int = 0, errors: Int = 0, lastError: String? = nil) {
            self.evaluations = evaluations
            self.values = values
            self.otherValues = otherValues
            self.errors = errors
            self.lastError = lastError
        }
    }

    /// The distinct values (other than true and false) kept per term: enough to see what a
    /// part returns, bounded whatever the requests (a term that reads data could return a new
    /// value each time).
    public static let distinctValues = 6

    /// What one term gave, as counted: cheap to keep and compare (no tree, no hashing).
    /// Numbers, short strings and null by value; anything else by its kind.
    enum Mark {
        case yes
        case no
        case failure(String)
        case null
        case number(Double)
        case string(String)
        case kind(Kind)

        enum Kind: UInt8 {
            case longString, snapshot, auth, claims, object, array, regex, query
        }

        init(_ value: RuleValue) {
            switch value {
            case .bool(let b): self = b ? .yes : .no
            case .null: self = .null
            case .number(let n): self = .number(n)
            case .string(let s): self = s.utf8.count <= 80 ? .string(s) : .kind(.longString)
            case .snapshot: self = .kind(.snapshot)
            case .auth: self = .kind(.auth)
            case .json: self = .kind(.claims)
            case .node: self = .kind(.object)
            case .array: self = .kind(.array)
            case .regex: self = .kind(.regex)
            case .query: self = .kind(.query)
            }
        }

        /// Whether two marks of values are the same value.
        func same(_ other: Mark) -> Bool {
            switch (self, other) {
            case (.null, .null): return true
            case (.number(let a), .number(let b)): return a == b
            case (.string(let a), .string(let b)): return a == b
            case (.kind(let a), .kind(let b)): return a == b
            default: return false
            }
        }

        var description: String {
            switch self {
            case .yes: return "true"
            case .no: return "false"
            case .failure(let reason): return "error (\(reason))"
            case .null: return "null"
            case .number(let n): return RuleTrace.describe(.number(n))
            case .string(let s): return RuleTrace.describe(.string(s))
            case .kind(let kind):
                switch kind {
                case .longString: return "a long string"
                case .snapshot: return "a snapshot"
                case .auth: return "auth"
                case .claims: return "the token's claims"
                case .object: return "an object"
                case .array: return "an array"
                case .regex: return "a regular expression"
                case .query: return "query"
                }
            }
        }
    }

    private struct Counts {
        var evaluations = 0
        var trues = 0
        var falses = 0
        var samples: [(mark: Mark, count: Int)] = []
        var otherValues = 0
        var errors = 0
        var lastError: String?
    }

    /// By term number; made at the first count, so rules nobody's requests reach hold nothing.
    private let tallies = Mutex<[Counts]>([])
    private let terms: Int

    init(terms: Int) {
        self.terms = terms
    }

    /// The counts, by term number.
    public var counts: [Tally] {
        let counted = tallies.withLock { $0 }
        return (counted.isEmpty ? Array(repeating: Counts(), count: terms) : counted).map { counts in
            var values = Dictionary(counts.samples.map { ($0.mark.description, $0.count) }, uniquingKeysWith: +)
            if counts.trues > 0 { values["true"] = counts.trues }
            if counts.falses > 0 { values["false"] = counts.falses }
            return Tally(evaluations: counts.evaluations, values: values, otherValues: counts.otherValues, errors: counts.errors,
                         lastError: counts.lastError)
        }
    }

    /// Terms a request evaluated, with what each gave.
    func record(_ marks: [(id: Int, mark: Mark)]) {
        guard !marks.isEmpty else { return }
        tallies.withLock { tallies in
            if tallies.isEmpty { tallies = Array(repeating: Counts(), count: terms) }
            for (id, mark) in marks where tallies.indices.contains(id) {
                tallies[id].evaluations += 1
                switch mark {
                case .yes: tallies[id].trues += 1
                case .no: tallies[id].falses += 1
                case .failure(let reason):
                    tallies[id].errors += 1
                    tallies[id].lastError = reason
                default:
                    if let i = tallies[id].samples.firstIndex(where: { $0.mark.same(mark) }) {
                        tallies[id].samples[i].count += 1
                    } else if tallies[id].samples.count < Self.distinctValues {
                        tallies[id].samples.append((mark, 1))
                    } else {
                        tallies[id].otherValues += 1
                    }
                }
            }
        }
    }
}
