import RTDBData

/// A rules file with what its requests made of each rule and each part of it
/// (`RuleCoverage`): as data (`/.inspect/coverage.json`, `rules coverage`) and as a page
/// (`/.inspect/coverage`), the file's text with every part marked.
public struct RuleCoverageReport: Sendable {
    /// One part of a rule (the whole of it included).
    public struct Part: Sendable {
        public let text: String
        /// How deep it is in its rule: the whole rule is 0, its operands 1, …
        public let depth: Int
        /// A literal (`true`, `'editor'`, `0`): worth what it says.
        public let isConstant: Bool
        /// Where it starts and ends in the file, in Unicode scalars, and where it starts as
        /// line and column (from 1).
        public let start: Int
        public let end: Int
        public let line: Int
        public let column: Int
        public let tally: RuleCoverage.Tally
    }

    /// One rule: `/users/$uid/.read`, where it is, its text and its parts in the order of the text.
    public struct Entry: Sendable {
        public let rule: String
        public let line: Int
        public let column: Int
        public let text: String
        public let parts: [Part]
        /// How many times it was evaluated.
        public var evaluations: Int { parts.first?.tally.evaluations ?? 0 }
    }

    /// The rules file as given.
    public let source: String
    /// Its rules in the order of the file.
    public let entries: [Entry]

    public init(_ rules: SecurityRules) {
        source = rules.source
        let scalars = Array(rules.source.unicodeScalars)
        let lines = LinePositions(scalars)
        let counts = rules.coverage?.counts ?? []
        // Where each rule's text is in the file: read again (the parsed rules keep no file offsets).
        var places: [String: (offsets: [Int]?, offset: Int)] = [:]
        if let text = try? RulesText.parse(scalars), case .object(let members, _) = text, let tree = members.first(where: { $0.key == "rules" }) {
            Self.locate(tree.value, location: [], into: &places)
        }
        var entries: [(offset: Int, entry: Entry)] = []
        for rule in rules.allRules {
            let place = places[rule.name]
            let ruleScalars = rule.text.unicodeScalars.count
            // Where the rule's scalar `index` starts in the file, and where the one before `index` ends.
            func fileOffset(_ index: Int) -> Int {
                guard let place else { return 0 }
                guard let offsets = place.offsets, offsets.indices.contains(index) else { return place.offset + index }
                return offsets[index]
            }
            func fileEnd(_ index: Int) -> Int {
                guard let place, index > 0 else { return fileOffset(index) }
                guard let offsets = place.offsets, offsets.indices.contains(index - 1) else { return place.offset + index }
                return Self.end(ofScalarAt: offsets[index - 1], in: scalars)
            }
            var parts: [Part] = []
            func walk(_ term: RuleTerm, depth: Int) {
                let span = term.span.clamped(to: 0..<ruleScalars)
                let start = fileOffset(span.lowerBound)
                let end = span.isEmpty ? start : fileEnd(span.upperBound)
                let (line, column) = lines.position(of: start)
                let text = String(String.UnicodeScalarView(Array(rule.text.unicodeScalars)[span]))
                var isConstant = false
                if case .constant = term.expression { isConstant = true }
                parts.append(Part(text: text, depth: depth, isConstant: isConstant, start: start, end: end, line: line, column: column,
                                  tally: counts.indices.contains(term.id) ? counts[term.id] : RuleCoverage.Tally()))
                for part in term.parts { walk(part, depth: depth + 1) }
            }
            walk(rule.term, depth: 0)
            let start = fileOffset(0)
            let (line, column) = lines.position(of: start)
            entries.append((start, Entry(rule: rule.name, line: line, column: column, text: rule.text, parts: parts)))
        }
        self.entries = entries.sorted { $0.offset < $1.offset }.map(\.entry)
    }

    /// The rule strings of a rules tree, by rule name (`/users/$uid/.read`): the file offset
    /// of each scalar of a string, or where a `true`/`false` is.
    private static func locate(_ text: RulesText, location: [String], into places: inout [String: (offsets: [Int]?, offset: Int)]) {
        guard case .object(let members, _) = text else { return }
        let prefix = location.isEmpty ? "" : "/" + location.joined(separator: "/")
        for member in members {
            if RuleKind(rawValue: member.key) != nil {
                switch member.value {
                case .string(_, let offsets, let offset): places[prefix + "/" + member.key] = (offsets, offset)
                default: places[prefix + "/" + member.key] = (nil, member.value.offset)
                }
            } else if !member.key.hasPrefix(".") {
                locate(member.value, location: location + [member.key], into: &places)
            }
        }
    }

    /// Just past the scalar of a rule string that starts at `offset` in the file: one on,
    /// or past its escape (`\"`, `\u0041`, a pair of `\u` for one scalar).
    private static func end(ofScalarAt offset: Int, in scalars: [Unicode.Scalar]) -> Int {
        guard scalars.indices.contains(offset), scalars[offset] == "\\" else { return offset + 1 }
        if case .success(let escape) = JSONEscape.decode(scalars, at: offset) { return escape.next }
        return offset + 2
    }

    // MARK: Data

    /// `{"source", "rules": [{"rule", "line", "column", "text", "evaluations", "parts": [{"text",
    /// "depth", "constant", "line", "column", "start", "end", "evaluations", "values",
    /// "otherValues", "errors", "lastError"}, …]}, …]}`; values most frequent first.
    public var json: JSONValue {
        .object([("source", .string(source)), ("rules", .array(entries.map { entry in
            .object([("rule", .string(entry.rule)), ("line", .number(Double(entry.line))), ("column", .number(Double(entry.column))),
                     ("text", .string(entry.text)), ("evaluations", .number(Double(entry.evaluations))),
                     ("parts", .array(entry.parts.map { part in
                        .object([("text", .string(part.text)), ("depth", .number(Double(part.depth))), ("constant", .bool(part.isConstant)),
                                 ("line", .number(Double(part.line))), ("column", .number(Double(part.column))),
                                 ("start", .number(Double(part.start))), ("end", .number(Double(part.end))),
                                 ("evaluations", .number(Double(part.tally.evaluations))),
                                 ("values", .object(Self.byCount(part.tally.values).map { ($0.value, .number(Double($0.count))) })),
                                 ("otherValues", .number(Double(part.tally.otherValues))),
                                 ("errors", .number(Double(part.tally.errors))), ("lastError", part.tally.lastError.map(JSONValue.string) ?? .null)])
                     }))])
        }))])
    }

    /// Values most frequent first, then in text order.
    static func byCount(_ values: [String: Int]) -> [(value: String, count: Int)] {
        values.map { ($0.key, $0.value) }.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
    }

    /// What a part gave, in words: `true ×9, false ×5`, `never evaluated`, `error ×2 (…)`.
    public static func summary(_ tally: RuleCoverage.Tally) -> String {
        guard tally.evaluations > 0 else { return "never evaluated" }
        var pieces = byCount(tally.values).map { "\($0.value) ×\($0.count)" }
        if tally.otherValues > 0 { pieces.append("other values ×\(tally.otherValues)") }
        if tally.errors > 0 { pieces.append("error ×\(tally.errors)" + (tally.lastError.map { " (\($0))" } ?? "")) }
        return pieces.joined(separator: ", ")
    }

    // MARK: Page

    /// The rules file as a page: each part marked by what it gave (green: only true, red:
    /// only false or an error, amber: both, grey: never evaluated), its counts on hover. One
    /// file, nothing fetched.
    public func html(namespace: String) -> String {
        let scalars = Array(source.unicodeScalars)
        var parts: [Part] = entries.flatMap(\.parts).filter { $0.start < $0.end && $0.end <= scalars.count }
        parts.sort { $0.start != $1.start ? $0.start < $1.start : $0.end > $1.end }
        var out = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Rules coverage: \(Self.escape(namespace))</title>\n<style>\n"
        out += "body{font-family:system-ui,sans-serif;margin:1.5em}pre{font:13px/1.6 ui-monospace,monospace;background:#fafafa;padding:1em;border:1px solid #ddd}\n"
        out += ".p{border-bottom:2px solid transparent}.never{color:#888;border-bottom:2px dashed #bbb}.true{background:rgba(40,167,69,.14);border-bottom-color:#28a745}\n"
        out += ".false{background:rgba(220,53,69,.12);border-bottom-color:#dc3545}.both{background:rgba(255,193,7,.16);border-bottom-color:#e0a800}\n"
        out += ".value{border-bottom-color:#4a7bd0}.error{border-bottom:2px wavy #dc3545}\n</style></head><body>\n"
        let evaluated = entries.filter { $0.evaluations > 0 }.count
        let allParts = entries.flatMap(\.parts)
        out += "<h1>Rules coverage: \(Self.escape(namespace))</h1>\n<p>\(evaluated) of \(entries.count) rules evaluated, "
        out += "\(allParts.filter { $0.tally.evaluations > 0 }.count) of \(allParts.count) parts, since the rules were set. "
        out += "Hover over a part for how often it was evaluated and what it gave.</p>\n<pre>"
        var open: [Int] = []  // ends of the spans open
        var index = 0
        var next = 0
        while index <= scalars.count {
            while let end = open.last, end == index { out += "</span>"; open.removeLast() }
            while next < parts.count && parts[next].start == index {
                let part = parts[next]
                next += 1
                // Marks nest; a part that would end past the one it starts in is not marked.
                if let outer = open.last, part.end > outer { continue }
                out += "<span class=\"p \(Self.category(part.tally))\" title=\"\(Self.escape(part.text + ": " + Self.summary(part.tally)))\">"
                open.append(part.end)
            }
            guard index < scalars.count else { break }
            out += Self.escape(String(scalars[index]))
            index += 1
        }
        out += String(repeating: "</span>", count: open.count)
        out += "</pre>\n</body></html>\n"
        return out
    }

    static func category(_ tally: RuleCoverage.Tally) -> String {
        if tally.evaluations == 0 { return "never" }
        if tally.errors > 0 && tally.values.isEmpty { return "error" }
        let t = tally.values["true"] != nil, f = tally.values["false"] != nil
        if t && f { return "both" }
        if t && tally.values.count == 1 { return "true" }
        if f && tally.values.count == 1 { return tally.errors > 0 ? "error" : "false" }
        return "value"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
