/// A command line error: a message and the column it points at.
public struct ShellError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var column: Int?
    /// The line ended inside a value (an open `{`, `[` or quote): more lines may finish it.
    public var unfinished = false
    public init(_ message: String, column: Int? = nil, unfinished: Bool = false) {
        self.message = message
        self.column = column
        self.unfinished = unfinished
    }
    public var description: String { message }
}
