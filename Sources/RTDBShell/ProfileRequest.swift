/// What `profile` captures and prints.
public struct ProfileRequest: Equatable, Sendable {
    /// How long to capture; nil: until Ctrl-C.
    public var duration: Double?
    /// The operations themselves, one JSON object a line, rather than the report.
    public var raw = false
    /// Where to write instead of the output.
    public var output: String?
    /// A raw capture to report on instead of capturing.
    public var input: String?
    /// Whether paths with many siblings collapse into `$wildcard`.
    public var collapse = true
}
