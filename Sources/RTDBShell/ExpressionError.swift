/// Why a transaction expression could not be parsed or evaluated, and where.
///
/// `offset` counts Characters from the start of the expression's source (0-based), so the shell
/// can add it to the column where the expression's token starts.
public struct ExpressionError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var offset: Int

    public init(_ message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    public var description: String { message }
}
