/// The methods a rule may call: on data snapshots and on strings.
enum RuleMethod: String, CaseIterable, Sendable {
    // Snapshots.
    case val, child, parent, hasChild, hasChildren, exists, getPriority, isNumber, isString, isBoolean
    // Strings.
    case contains, beginsWith, endsWith, replace, toLowerCase, toUpperCase, matches

    var onSnapshot: Bool {
        switch self {
        case .val, .child, .parent, .hasChild, .hasChildren, .exists, .getPriority, .isNumber, .isString, .isBoolean: return true
        default: return false
        }
    }

    /// The arguments' types; `hasChildren` takes none or one array.
    var parameters: [RuleType] {
        switch self {
        case .child, .hasChild, .contains, .beginsWith, .endsWith: return [.string]
        case .replace: return [.string, .string]
        case .matches: return [.regex]
        case .hasChildren: return [.array]
        default: return []
        }
    }

    var result: RuleType {
        switch self {
        case .val, .getPriority: return .any
        case .child, .parent: return .snapshot
        case .replace, .toLowerCase, .toUpperCase: return .string
        default: return .boolean
        }
    }
}
