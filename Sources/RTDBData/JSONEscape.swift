/// The escapes of a JSON string (RFC 8259 §7), read from Unicode scalars: the one decoder of
/// every reader of JSON-like text kept as scalars (the rules file, the shell's transaction
/// expressions), which each report a problem at their own position and in their own words.
/// `JSONReader` reads bytes, and keeps a loop of its own tuned for them.
public enum JSONEscape {
    public enum Problem: Error, Equatable {
        /// The text ends inside the escape.
        case unterminated
        /// A backslash followed by a letter JSON does not know.
        case invalid(Unicode.Scalar)
        /// `\u` not followed by four hexadecimal digits.
        case badHex
        /// Half of a UTF-16 surrogate pair, or a pair that names no scalar.
        case unpairedSurrogate
    }

    /// Decodes the escape whose backslash is `scalars[backslash]`: the scalar it stands for
    /// and the index just after it. A `\u` high surrogate must be followed by a `\u` low one;
    /// together they name one scalar.
    public static func decode(_ scalars: [Unicode.Scalar], at backslash: Int) -> Result<(scalar: Unicode.Scalar, next: Int), Problem> {
        let letterAt = backslash + 1
        guard letterAt < scalars.count else { return .failure(.unterminated) }
        switch scalars[letterAt] {
        case "\"": return .success(("\"", letterAt + 1))
        case "\\": return .success(("\\", letterAt + 1))
        case "/": return .success(("/", letterAt + 1))
        case "b": return .success(("\u{08}", letterAt + 1))
        case "f": return .success(("\u{0C}", letterAt + 1))
        case "n": return .success(("\n", letterAt + 1))
        case "r": return .success(("\r", letterAt + 1))
        case "t": return .success(("\t", letterAt + 1))
        case "u":
            let unit: UInt32
            switch hexUnit(scalars, at: letterAt + 1) {
            case .success(let value): unit = value
            case .failure(let problem): return .failure(problem)
            }
            var next = letterAt + 5
            if (0xDC00...0xDFFF).contains(unit) { return .failure(.unpairedSurrogate) }
            if (0xD800...0xDBFF).contains(unit) {
                guard next + 1 < scalars.count, scalars[next] == "\\", scalars[next + 1] == "u" else { return .failure(.unpairedSurrogate) }
                let low: UInt32
                switch hexUnit(scalars, at: next + 2) {
                case .success(let value): low = value
                case .failure(let problem): return .failure(problem)
                }
                guard (0xDC00...0xDFFF).contains(low),
                      let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) else {
                    return .failure(.unpairedSurrogate)
                }
                next += 6
                return .success((scalar, next))
            }
            guard let scalar = Unicode.Scalar(unit) else { return .failure(.unpairedSurrogate) }
            return .success((scalar, next))
        case let letter:
            return .failure(.invalid(letter))
        }
    }

    /// The four hexadecimal digits at `start`.
    private static func hexUnit(_ scalars: [Unicode.Scalar], at start: Int) -> Result<UInt32, Problem> {
        var unit: UInt32 = 0
        for index in start..<start + 4 {
            guard index < scalars.count else { return .failure(.unterminated) }
            guard scalars[index].isASCII, let digit = UInt32(String(scalars[index]), radix: 16) else { return .failure(.badHex) }
            unit = unit * 16 + digit
        }
        return .success(unit)
    }
}
