/// Why a rules file was refused, with where: line and column are counted from 1.
public struct RulesError: Error, CustomStringConvertible, Sendable {
    public let line: Int
    public let column: Int
    public let message: String

    public var description: String { "line \(line), column \(column): \(message)" }

    init(_ error: RuleSyntaxError, in scalars: [Unicode.Scalar]) {
        (line, column) = LinePositions(scalars).position(of: error.offset)
        self.message = error.message
    }
}
