/// A line of a script longer than any command takes: it is measured, not kept (a line of a
/// gigabyte would otherwise take several in memory) and not run.
public struct ScriptLineTooLong: Error, Equatable, CustomStringConvertible {
    public let bytes: Int

    /// The longest line kept: the largest value a write takes, and room for the command
    /// and its path.
    public static let limit = ValueParser.maxWriteBytes + (1 << 20)

    public init(bytes: Int) { self.bytes = bytes }

    public var description: String {
        "the line is \(bytes) bytes, more than any command takes (a value is \(ValueParser.maxWriteBytes >> 20) MB at most); it was not run (write a large value with 'import')"
    }
}
