import RTDBData

/// The expression of `tx PATH EXPR`: computes a location's new value from its current one.
///
/// It can read nothing but that value (`$`), so running it on data from anywhere is safe:
/// parsing bounds the source's length and nesting, and evaluation only fails with an
/// `ExpressionError` or ends in `abort(…)`.
public struct TransactionExpression: Sendable, Equatable {
    public let source: String
    let root: ExpressionNode

    private init(source: String, root: ExpressionNode) {
        self.source = source
        self.root = root
    }

    /// Two expressions are the same when their text is.
    public static func == (a: TransactionExpression, b: TransactionExpression) -> Bool { a.source == b.source }

    /// Parses EXPR; throws ExpressionError (message + character offset into `source`).
    public static func parse(_ source: String) throws -> TransactionExpression {
        TransactionExpression(source: source, root: try ExpressionParser.parse(source))
    }

    /// Evaluates with `$` = current. Throws ExpressionError for a runtime type error (with the
    /// offset of the offending operator or sub-expression). A null result is `.value(.empty)`:
    /// the transaction deletes the location.
    public func evaluate(current: Node) throws -> TransactionOutcome {
        do {
            return .value(try ExpressionEvaluator(current: current).evaluate(root).node)
        } catch let abort as ExpressionEvaluator.Abort {
            return .abort(abort.reason)
        }
    }
}
