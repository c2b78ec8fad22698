/// A word of a command line and where it starts (0-based, in characters).
public struct Token: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case word        // bare: a command, flag, path or bare value
        case doubleQuoted  // "…": JSON string syntax, kept with its quotes
        case singleQuoted  // '…': literal text, no escapes
        case json        // {…} or […]: a JSON object or array, kept whole
    }
    public var text: String
    /// In Unicode scalars from the start of the line.
    public var column: Int
    public var kind: Kind

    /// The token's text as a word: quotes removed from quoted tokens.
    public var unquoted: String {
        switch kind {
        case .word, .json: return text
        case .singleQuoted: return String(text.dropFirst().dropLast())
        case .doubleQuoted:
            return (try? RTDBDataBridge.decodeJSONString(text)) ?? String(text.dropFirst().dropLast())
        }
    }
}
