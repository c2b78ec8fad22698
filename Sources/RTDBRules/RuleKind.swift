/// The three kinds of rule; each sees a different set of variables.
public enum RuleKind: String, Sendable {
    case read = ".read", write = ".write", validate = ".validate"

    func allows(_ variable: RuleVariable) -> Bool {
        switch variable {
        case .newData: return self != .read
        case .query: return self == .read
        default: return true
        }
    }
}
