/// A command line error: a message and the column it points at.
public struct ShellError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var column: Int?
    public init(_ message: String, column: Int? = nil) {
        self.message = message
        self.column = column
    }
    public var description: String { message }
}
