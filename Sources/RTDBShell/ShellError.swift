import RTDBClient

/// A command line error: a message and the column it points at.
public struct ShellError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var column: Int?
    /// The line ended inside a value (an open `{`, `[` or quote): more lines may finish it.
    public var unfinished = false
    /// The database's code when the error is its refusal (`TOO_BIG`, `PERMISSION_DENIED`, …).
    public var code: String?
    public init(_ message: String, column: Int? = nil, unfinished: Bool = false) {
        self.message = message
        self.column = column
        self.unfinished = unfinished
    }
    public var description: String { message }

    /// A refusal from the database, reported as it words it.
    public init(_ refusal: DatabaseError) {
        self.init("\(refusal)")
        code = refusal.code
    }
}
