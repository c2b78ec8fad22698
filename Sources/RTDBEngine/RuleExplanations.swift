import RTDBRules

/// How a database tells of its rules' decisions: which rule decided, where, and what each of
/// its parts was worth (`RuleTrace`).
public struct RuleExplanations: Sendable {
    /// A refusal sent to a client says why. The trace may show data the rules read, so a
    /// server reachable from other machines keeps it to its log.
    public var toClients: Bool
    /// Every decision on a request that is not the owner's, one line each
    /// (`rtdb serve --log-rules`).
    public var log: (@Sendable (String) -> Void)?

    public init(toClients: Bool = true, log: (@Sendable (String) -> Void)? = nil) {
        self.toClients = toClients
        self.log = log
    }

    /// Runs a rules check (`evaluate`, given the trace to record into, if any, and whether
    /// the evaluation counts in the coverage): with a trace when decisions are logged, or
    /// again with one (not counted) when it refused (and can be explained) and refusals are
    /// explained; refusals are rare, and a trace kept for every request would cost each one.
    /// Logs the decision on `what` (`read of /a`). Returns the outcome and its trace.
    func decide<Outcome>(_ what: String, as identity: Identity, refused: (Outcome) -> Bool, explainable: (Outcome) -> Bool = { _ in true },
                         _ evaluate: (_ trace: RuleTrace?, _ counted: Bool) -> Outcome) -> (Outcome, RuleTrace?) {
        let logged = log != nil && identity != .admin
        var trace = logged ? RuleTrace() : nil
        let outcome = evaluate(trace, true)
        if refused(outcome) && explainable(outcome) && trace == nil && toClients {
            trace = RuleTrace()
            _ = evaluate(trace, false)
        }
        if logged, let log {
            let steps = Self.steps(trace?.steps ?? [])
            log("rules: \(refused(outcome) ? "denied" : "allowed") \(what) as \(Self.describe(identity))" + (steps.isEmpty ? "" : ": " + steps))
        }
        return (outcome, trace)
    }

    /// How a log line and a refusal name who asked.
    static func describe(_ identity: Identity) -> String {
        switch identity {
        case .admin: return "the owner"
        case .anonymous: return "no one (no credential)"
        case .user(let uid, _, _): return "uid \(uid)"
        }
    }

    /// The steps of a trace, one after another: `rule: text → values → result; …`.
    static func steps(_ steps: [RuleTrace.Step]) -> String {
        steps.map(\.line).joined(separator: "; ")
    }
}
