import RTDBData

/// How the prompt shows a line as it is typed: the command, paths, flags and values in
/// their colours, a mistake the parser would stop at (an unknown command or flag, an invalid
/// key, a value that is not JSON, an unclosed `{` or quote) underlined in red from where it
/// starts, and after the cursor, dimmed, the rest of the most recent history line that starts
/// with it, or else the usage of the command still to type.
///
/// Only what the line says is read: nothing from the database and no file (`@file` is not
/// opened), so it costs no more than the parser does, linear in the line.
public enum LineHighlighter {
    enum Style: String {
        case command = "\u{1B}[1m"
        case flag = "\u{1B}[33m"
        case path = "\u{1B}[34m"
        case string = "\u{1B}[32m"
        case number = "\u{1B}[36m"
        case literal = "\u{1B}[35m"
        case serverValue = "\u{1B}[35;1m"
        case mistake = "\u{1B}[4;31m"
        case hint = "\u{1B}[2m"
    }
    static let reset = "\u{1B}[0m"

    /// A stretch of the line (in Unicode scalars from its start) and its style.
    struct Span: Equatable {
        var start: Int
        var end: Int
        var style: Style
    }

    /// `line` with its styles (escape sequences around each styled stretch).
    public static func highlight(_ line: String, cwd: Path = .root) -> String {
        render(line, spans(line, cwd: cwd))
    }

    /// The rest of the newest entry of `history` (newest last) that starts with `line`, as
    /// fish suggests it; nil when none does.
    public static func suggestion(_ line: String, history: [String]) -> String? {
        guard !line.isEmpty else { return nil }
        // A line of several (a value continued) is not offered: the prompt shows one row.
        return history.last { $0.utf8.count > line.utf8.count && $0.hasPrefix(line) && !hasControl($0) }.map { String($0.dropFirst(line.count)) }
    }

    /// Whether `text` holds a control character (a line break, a tab, an escape), which the
    /// line editor shows in a way of its own: such a line is left as libedit draws it.
    public static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// The suggestion as shown: dimmed.
    static func dimmed(_ text: String) -> String { Style.hint.rawValue + text + reset }

    // MARK: Spans

    static func spans(_ line: String, cwd: Path) -> [Span] {
        let (tokens, failure) = Tokenizer.tokensSoFar(line)
        var spans = classify(tokens, cwd: cwd)
        if let failure {
            // An unclosed value or quote runs to the end of the line: the words before it
            // are read as they are, and the rest, from the token it starts in, is the mistake.
            let total = line.unicodeScalars.count
            spans.append(Span(start: min(failure.start, total), end: total, style: .mistake))
        }
        return spans
    }

    /// Each token's span, as the parser would read it.
    private static func classify(_ tokens: [Token], cwd: Path) -> [Span] {
        guard let first = tokens.first else { return [] }
        var spans: [Span] = []
        func mark(_ token: Token, _ style: Style) {
            spans.append(Span(start: token.column, end: token.column + token.text.unicodeScalars.count, style: style))
        }
        guard let spec = CommandSpec.find(first.text), first.kind == .word else {
            mark(first, .mistake)
            return spans
        }
        mark(first, .command)
        let words = Array(tokens.dropFirst())
        let reading = ArgumentReading(words, spec: spec)
        var positional: [Token] = []
        for (token, part) in zip(words, reading.parts) {
            switch part {
            case .count:
                mark(token, .number)
            case .flag(let flag):
                mark(token, flag == nil ? .mistake : .flag)
            case .value(let flag):
                if !flag.choices.isEmpty && flag.name != "--events" {
                    mark(token, flag.choices.contains(token.unquoted) ? .literal : .mistake)
                } else if token.kind == .json {
                    // Flags read their JSON their own way (--claims as any JSON): coloured, not judged.
                    spans += jsonSpans(token, mistakeFrom: nil)
                } else {
                    spans += valueSpans(token)
                }
            case .key:
                spans += valueSpans(token)
            case .argument:
                positional.append(token)
            case .endOfFlags:
                break
            }
        }
        var before: [String] = []
        for (position, token) in positional.enumerated() {
            // The fixed words and paths after them come among the first arguments only.
            let joined = position < 4 ? before.joined(separator: " ") : "\u{0}"
            if spec.name == "tx" && position > 0 {
                // An expression, read by its own parser: left as typed.
                continue
            }
            if let words = spec.words[joined] {
                mark(token, words.contains(token.text) ? .literal : .mistake)
            } else if (position == 0 && spec.argument == .path) || spec.argument == .paths || spec.pathAfter.contains(joined) {
                mark(token, isValidPath(token, cwd: cwd) ? .path : .mistake)
            } else if spec.argument == .command {
                mark(token, CommandSpec.find(token.text) == nil ? .mistake : .command)
            } else if spec.name == "update" || (spec.name == "ondisconnect" && before.last == "update")
                        || (spec.name == "rules" && before.count >= 2 && before[1] == "update") {
                spans += updateSpans(token)
            } else {
                spans += valueSpans(token)
            }
            before.append(token.text)
        }
        // The rest is a command line of its own (`repeat`).
        if let wrapped = reading.wrapped { spans += classify(Array(words[wrapped...]), cwd: cwd) }
        return spans
    }

    private static func isValidPath(_ token: Token, cwd: Path) -> Bool {
        guard token.kind != .json else { return false }
        return (try? CommandParser.resolve(token.unquoted, cwd: cwd).validate(allowInfo: true)) != nil
    }

    /// A value as `ValueParser` reads it: JSON coloured by its parts, a bare word by what it
    /// is; one it would refuse is a mistake from where its error is.
    private static func valueSpans(_ token: Token) -> [Span] {
        let end = token.column + token.text.unicodeScalars.count
        switch token.kind {
        case .singleQuoted:
            return [Span(start: token.column, end: end, style: .string)]
        case .doubleQuoted, .json:
            do {
                _ = try ValueParser.parse(token, base: .root)
            } catch let error as ShellError {
                return jsonSpans(token, mistakeFrom: error.column ?? token.column)
            } catch {
                return [Span(start: token.column, end: end, style: .mistake)]
            }
            return jsonSpans(token, mistakeFrom: nil)
        case .word:
            let text = token.text
            if text.hasPrefix("@") { return [Span(start: token.column, end: end, style: .path)] }
            if text.hasPrefix("now(") || text.hasPrefix("increment(") {
                let valid = (try? ValueParser.parse(token, base: .root)) != nil
                return [Span(start: token.column, end: end, style: valid ? .serverValue : .mistake)]
            }
            if text == "true" || text == "false" || text == "null" { return [Span(start: token.column, end: end, style: .literal)] }
            if let first = text.unicodeScalars.first, first == "-" || first == "+" || ("0"..."9").contains(first) {
                let valid = (try? ValueParser.parse(token, base: .root)) != nil
                if valid, Double(text) != nil { return [Span(start: token.column, end: end, style: .number)] }
            }
            return [Span(start: token.column, end: end, style: .string)]
        }
    }

    private static func updateSpans(_ token: Token) -> [Span] {
        guard token.kind == .json else { return valueSpans(token) }
        do {
            _ = try ValueParser.parseUpdate(token, base: .root)
        } catch let error as ShellError {
            return jsonSpans(token, mistakeFrom: error.column ?? token.column)
        } catch {}
        return jsonSpans(token, mistakeFrom: nil)
    }

    /// JSON's strings, numbers, literals and server values in their colours; from
    /// `mistakeFrom` on, the mistake.
    private static func jsonSpans(_ token: Token, mistakeFrom: Int?) -> [Span] {
        var spans: [Span] = []
        let scalars = Array(token.text.unicodeScalars)
        let stop = mistakeFrom.map { max(0, $0 - token.column) } ?? scalars.count
        var i = 0
        var expectingKey = false
        while i < min(stop, scalars.count) {
            let c = scalars[i]
            let start = i
            if c == "\"" {
                i += 1
                while i < scalars.count && scalars[i] != "\"" { i += scalars[i] == "\\" ? 2 : 1 }
                i = min(i + 1, scalars.count)
                // A member's name is left plain; its value is a string.
                var next = i
                while next < scalars.count && scalars[next] == " " { next += 1 }
                let isKey = next < scalars.count && scalars[next] == ":" && expectingKey
                if !isKey { spans.append(Span(start: token.column + start, end: token.column + min(i, stop), style: .string)) }
                continue
            }
            if c == "{" || c == "," { expectingKey = true } else if c == ":" || c == "[" { expectingKey = false }
            if c == "-" || ("0"..."9").contains(c) {
                while i < scalars.count, "+-.eE0123456789".unicodeScalars.contains(scalars[i]) { i += 1 }
                spans.append(Span(start: token.column + start, end: token.column + min(i, stop), style: .number))
                continue
            }
            if ("a"..."z").contains(c) {
                while i < scalars.count, ("a"..."z").contains(scalars[i]) { i += 1 }
                var style = Style.literal
                if i < scalars.count && scalars[i] == "(" {
                    while i < scalars.count && scalars[i] != ")" { i += 1 }
                    i = min(i + 1, scalars.count)
                    style = .serverValue
                }
                spans.append(Span(start: token.column + start, end: token.column + min(i, stop), style: style))
                continue
            }
            i += 1
        }
        if stop < scalars.count {
            spans.append(Span(start: token.column + stop, end: token.column + scalars.count, style: .mistake))
        }
        return spans
    }

    // MARK: Rendering

    /// The line with each span's style switched on at its start and off at its end. Built
    /// as bytes: spans count Unicode scalars, the first byte of each is where they begin.
    static func render(_ line: String, _ spans: [Span]) -> String {
        guard !spans.isEmpty else { return line }
        let ordered = spans.sorted { $0.start < $1.start }
        var out: [UInt8] = []
        out.reserveCapacity(line.utf8.count + spans.count * 10)
        var scalar = 0
        var next = 0
        var openEnd: Int?
        for byte in line.utf8 {
            if byte & 0xC0 != 0x80 {
                if let end = openEnd, scalar == end {
                    out.append(contentsOf: reset.utf8)
                    openEnd = nil
                }
                while next < ordered.count && ordered[next].end <= scalar { next += 1 }
                if openEnd == nil, next < ordered.count, ordered[next].start == scalar {
                    out.append(contentsOf: ordered[next].style.rawValue.utf8)
                    openEnd = ordered[next].end
                    next += 1
                }
                scalar += 1
            }
            out.append(byte)
        }
        if openEnd != nil { out.append(contentsOf: reset.utf8) }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Usage

    /// The usage still to type after `line`, which ends in a space (or is the command alone):
    /// the command's usage without the arguments typed already.
    public static func usageHint(_ line: String) -> String? {
        guard let tokens = try? Tokenizer.tokenize(line), let first = tokens.first, let spec = CommandSpec.find(first.text) else { return nil }
        let endsInSpace = line.hasSuffix(" ")
        guard endsInSpace || tokens.count == 1 else { return nil }
        let words = Array(tokens.dropFirst())
        let reading = ArgumentReading(words, spec: spec)
        // Past the wrapper's own count and flags, the usage is the wrapped command's.
        if let wrapped = reading.wrapped {
            return usageHint(String(String.UnicodeScalarView(line.unicodeScalars.dropFirst(words[wrapped].column))))
        }
        // A flag still waiting for its value is hinted that value.
        if case .value(let flag) = reading.next, let value = flag.value { return (endsInSpace ? "" : " ") + value }
        // Arguments typed, not counting flags and their values.
        let typed = reading.arguments(of: words).count
        let alternatives = spec.usage.components(separatedBy: " | \(spec.name) ")
        var groups = usageGroups(alternatives.first ?? spec.usage).dropFirst()
        var skipped = 0
        while skipped < typed, let group = groups.first, !group.hasPrefix("[-"), group != "[flags]", group != "[query flags]" {
            groups.removeFirst()
            skipped += 1
        }
        guard !groups.isEmpty else { return nil }
        return (endsInSpace ? "" : " ") + groups.joined(separator: " ")
    }

    /// `usage`'s words, a bracketed group as one.
    private static func usageGroups(_ usage: String) -> [String] {
        var groups: [String] = []
        var current = ""
        var depth = 0
        for character in usage {
            if character == "[" { depth += 1 }
            if character == "]" { depth -= 1 }
            if character == " " && depth == 0 {
                if !current.isEmpty { groups.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { groups.append(current) }
        return groups
    }
}
