import RTDBClient
import RTDBData

/// What `tx` computes from the current value: an expression, or one of its shorthands.
public enum TransactionChange: Equatable, Sendable {
    /// `tx PATH EXPR`; `column` is where EXPR starts on the line, for errors found while it runs.
    case expression(TransactionExpression, column: Int)
    /// `--increment N`: adds N to a number; null counts as 0.
    case increment(Double)
    /// `--append VALUE`: adds VALUE at the end of a list (keys 0, 1, …); null is an empty list.
    case append(Node)
    /// `--set-if-absent VALUE`: writes VALUE only where there is nothing.
    case setIfAbsent(Node)

    /// One attempt on `current`. Throws a `ShellError` (with the column for an expression)
    /// when the value is not what the change works on.
    func apply(to current: Node, at path: Path) throws -> TransactionUpdate {
        switch self {
        case let .expression(expression, column):
            do {
                switch try expression.evaluate(current: current) {
                case .value(let node): return .commit(node)
                case .abort(let reason): return .abort(reason)
                }
            } catch let error as ExpressionError {
                throw ShellError(error.message, column: column + error.offset)
            }
        case .increment(let delta):
            switch current.content {
            case .empty: return .commit(Node(delta))
            case .leaf(.number(let n)) where (n + delta).isFinite: return .commit(Node(n + delta))
            default: throw ShellError("cannot increment \(path): it holds \(TransactionChange.describe(current)), not a number")
            }
        case .append(let value):
            if current.isEmpty { return .commit(Node.empty.updatingChild(ChildKey("0"), value)) }
            guard let next = TransactionChange.nextIndex(current) else {
                throw ShellError("cannot append to \(path): it holds \(TransactionChange.describe(current)), not a list")
            }
            return .commit(current.updatingChild(ChildKey(String(next)), value))
        case .setIfAbsent(let value):
            return current.isEmpty ? .commit(value) : .abort("\(path) already has a value")
        }
    }

    /// The index after a list's last one; nil when the value is not a list (children keyed
    /// 0, 1, … as the database stores arrays, possibly with holes; an index is a 32-bit
    /// integer, as the database's array keys are, so the next one cannot overflow).
    private static func nextIndex(_ node: Node) -> Int? {
        guard !node.isLeaf else { return nil }
        var last = -1
        for (key, _) in node.children {
            guard let index = Int32(key.name), index >= 0, String(index) == key.name else { return nil }
            last = max(last, Int(index))
        }
        return last + 1
    }

    private static func describe(_ node: Node) -> String {
        let text = JSONWriter.string(node)
        return text.count > 40 ? String(text.prefix(40)) + "…" : text
    }
}
