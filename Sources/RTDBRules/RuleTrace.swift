import RTDBData

/// What the rules said of one request, rule by rule: each rule evaluated, where, what each
/// part of it was worth, and what it gave. Made only when asked (to explain a refusal, for
/// `--log-rules`): rules evaluated without one record nothing.
public final class RuleTrace {
    /// One rule evaluated.
    public struct Step: Sendable, Equatable {
        /// The rule, wildcards by name: `/users/$uid/.write`.
        public let rule: String
        /// Where it ran: `/users/bob`.
        public let path: Path
        /// The rule's text.
        public let text: String
        /// The text with each part replaced by what it was worth; the same as `text` when a
        /// rule has no parts to show (`true`).
        public let values: String
        public let result: Bool

        public init(rule: String, path: Path, text: String, values: String, result: Bool) {
            self.rule = rule
            self.path = path
            self.text = text
            self.values = values
            self.result = result
        }

        /// `/users/$uid/.write at /users/bob: auth.uid == $uid → "alice" == "bob" → false`;
        /// where it ran is said of a rule under a wildcard only, and the values are left out
        /// when they say no more than the text or the result (`data.exists() → true`).
        public var line: String {
            let shown = values == text || values == String(result) ? "" : " → " + values
            let at = rule.contains("/$") ? " at \(path)" : ""
            return "\(rule)\(at): \(text)\(shown) → \(result)"
        }
    }

    public private(set) var steps: [Step] = []

    /// What a term gave.
    enum Outcome {
        case value(RuleValue)
        case failure(String)
    }

    public init() {}

    /// `rule` was evaluated at `path` and gave `result`: a step, made from what its terms gave.
    func finish(_ rule: Rule, at path: Path, result: Bool, outcomes: [(id: Int, outcome: Outcome)]) {
        let rendering = Rendering(scalars: Array(rule.text.unicodeScalars),
                                  outcomes: Dictionary(outcomes, uniquingKeysWith: { _, last in last }))
        let values = rendering.render(rule.term, nested: false)
        steps.append(Step(rule: rule.name, path: path, text: rule.text, values: values, result: result))
    }

    /// One rule's text with what its terms gave, by number.
    private struct Rendering {
        let scalars: [Unicode.Scalar]
        let outcomes: [Int: Outcome]

        /// A term with what its parts were worth: the operands of a comparison or arithmetic
        /// by their values, logic (`&&`, `||`, `!`, `?:`) kept as it is with its operands
        /// shown the same way; a part that was not evaluated (short-circuited) by its text.
        func render(_ term: RuleTerm, nested: Bool) -> String {
            func logic(_ body: String) -> String { nested ? "(" + body + ")" : body }
            switch term.expression {
            case .and(let a, let b), .or(let a, let b):
                let op: String
                if case .and = term.expression { op = "&&" } else { op = "||" }
                let right = outcomes[b.id] == nil ? text(b) : render(b, nested: true)
                return logic(render(a, nested: true) + " " + op + " " + right)
            case .not(let a):
                return "!" + render(a, nested: true)
            case .conditional(let condition, let yes, let no):
                // Neither branch ran when the condition failed.
                guard outcomes[yes.id] != nil || outcomes[no.id] != nil else {
                    return logic(render(condition, nested: true) + " ? " + text(yes) + " : " + text(no))
                }
                let taken = outcomes[yes.id] != nil ? yes : no
                return logic(render(condition, nested: true) + " ? " + render(taken, nested: true))
            case .binary(let op, let a, let b):
                return logic(shown(a) + " " + op.rawValue + " " + shown(b))
            default:
                return shown(term)
            }
        }

        func text(_ term: RuleTerm) -> String {
            let span = term.span.clamped(to: 0..<scalars.count)
            return String(String.UnicodeScalarView(scalars[span]))
        }

        /// What `term` was worth, or its text when it was not evaluated.
        func shown(_ term: RuleTerm) -> String {
            switch outcomes[term.id] {
            case .value(let value)?: return RuleTrace.describe(value)
            case .failure(let reason)?: return "(error: \(reason))"
            case nil: return text(term)
            }
        }
    }

    /// A value as a trace shows it: JSON for data, short.
    static func describe(_ value: RuleValue) -> String {
        let text: String
        switch value {
        case .null: text = "null"
        case .bool(let b): text = String(b)
        case .number(let n): text = JSONValue.number(n).serialized()
        case .string(let s): text = JSONValue.string(s).serialized()
        case .json(let json): text = json.serialized()
        case .node(let node):
            // A few keys, not the whole of it: `root.val()` may hold the whole database.
            let keys = node.children.prefix(3).map { JSONValue.string($0.key.name).serialized() + ": …" }
            text = "{" + keys.joined(separator: ", ") + (node.children.count > 3 ? ", …" : "") + "}"
        case .auth(let auth): text = "auth(uid \(JSONValue.string(auth.uid).serialized()))"
        case .array(let items): text = "[" + items.map(describe).joined(separator: ", ") + "]"
        case .snapshot(let snapshot): text = "snapshot of \(snapshot.path)"
        case .regex: text = "a regular expression"
        case .query: text = "query"
        }
        return text.count > 80 ? String(text.prefix(79)) + "…" : text
    }
}
