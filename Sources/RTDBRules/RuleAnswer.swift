import RTDBData

/// What the rules say of a `RuleQuestion`: allowed or not, why not, and each rule evaluated
/// on the way, in order.
public struct RuleAnswer: Sendable, Equatable {
    public var allowed: Bool
    /// Why it is refused, as a refused client is told (`no .write rule allows this write`);
    /// nil when allowed.
    public var reason: String?
    public var steps: [RuleTrace.Step]

    public init(allowed: Bool, reason: String?, steps: [RuleTrace.Step]) {
        self.allowed = allowed
        self.reason = reason
        self.steps = steps
    }

    /// `{"allowed": false, "reason": …, "trace": [{"rule", "path", "text", "values", "result"}, …]}`.
    public var json: JSONValue {
        let trace = steps.map { step in
            JSONValue.object([("rule", .string(step.rule)), ("path", .string(step.path.description)), ("text", .string(step.text)),
                              ("values", .string(step.values)), ("result", .bool(step.result))])
        }
        return .object([("allowed", .bool(allowed)), ("reason", reason.map(JSONValue.string) ?? .null), ("trace", .array(trace))])
    }

    /// Reads an answer as `json` writes it; nil when it is not one.
    public init?(json: JSONValue) {
        guard case .bool(let allowed)? = json["allowed"], case .array(let trace)? = json["trace"] else { return nil }
        var steps: [RuleTrace.Step] = []
        for item in trace {
            guard let rule = item["rule"]?.string, let path = item["path"]?.string, let text = item["text"]?.string,
                  let values = item["values"]?.string, case .bool(let result)? = item["result"] else { return nil }
            steps.append(RuleTrace.Step(rule: rule, path: Path(path), text: text, values: values, result: result))
        }
        self.init(allowed: allowed, reason: json["reason"]?.string, steps: steps)
    }
}
