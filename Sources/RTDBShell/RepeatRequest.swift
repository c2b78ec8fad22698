/// `repeat [COUNT] [--every DURATION] COMMAND`: a command run again and again.
public struct RepeatRequest: Equatable, Sendable {
    /// How many runs; nil: until Ctrl-C.
    public var count: Int?
    /// The wait between runs, in seconds.
    public var every: Double
    /// The command run, parsed once.
    public var command: ParsedLine
    /// The command as typed, for the header above each run at a terminal.
    public var text: String

    /// Between runs when `--every` does not say: as psql's `\watch` and watch(1) wait.
    public static let defaultEvery = 2.0
}
