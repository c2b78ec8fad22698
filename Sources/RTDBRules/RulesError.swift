/// Why a rules file was refused, with where: line and column are counted from 1.
public struct RulesError: Error, CustomStringConvertible, Sendable {
    public let line: Int
    public let column: Int
    public let message: String

    public var description: String { "line \(line), column \(column): \(message)" }

    init(_ error: RuleSyntaxError, in scalars: [Unicode.Scalar]) {
        var line = 1, column = 1
        for scalar in scalars.prefix(max(0, error.offset)) {
            if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
        }
        self.line = line
        self.column = column
        self.message = error.message
    }
}
