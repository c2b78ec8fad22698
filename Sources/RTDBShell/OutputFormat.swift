import RTDBData

/// How a command prints its data (`--format`, and `rtdb --format` for every line).
///
/// `json` is what `--json` prints; the others are made from that JSON, so every command
/// that prints data has them all and they agree: `ndjson` one JSON value a line, `table`
/// aligned columns for a person, `csv` (RFC 4180) and `tsv` for spreadsheets and tools.
/// Rows and columns are `DataTable`'s.
public enum OutputFormat: String, CaseIterable, Sendable {
    case json, ndjson, table, csv, tsv

    public static let names = allCases.map(\.rawValue)

    /// Whether the format is made from the command's JSON (everything but `json` itself).
    var isDerived: Bool { self != .json }

    /// A whole result (`value`, what `--json` prints) in this format, and a note for
    /// standard error when a table leaves fields out. `width` is the terminal's (nil: no
    /// limit), for `table`; `color` bolds its header.
    func render(_ value: JSONValue, width: Int?, color: Bool) -> (text: String, note: String?) {
        switch self {
        case .json: return (value.serialized() + "\n", nil)
        case .ndjson: return (OutputFormat.lines(value), nil)
        case .csv, .tsv:
            let table = DataTable(value)
            guard !table.rows.isEmpty else { return ("", nil) }
            var out = line(table.columns.map(DataTable.Cell.text))
            for row in table.rows { out += line(row) }
            return (out, OutputFormat.note(table))
        case .table:
            let table = DataTable(value)
            return (OutputFormat.aligned(table, width: width, color: color), OutputFormat.note(table))
        }
    }

    /// What a table leaves out: fields that only rows past the first `DataTable.sampled` have.
    static func note(_ table: DataTable) -> String? {
        guard table.rowsWithUnshown > 0 else { return nil }
        let rows = table.rowsWithUnshown
        let fields = table.unshown.prefix(10).joined(separator: ", ") + (table.unshown.count > 10 ? ", …" : "")
        return "note: \(rows) \(rows == 1 ? "row has" : "rows have") fields the first \(DataTable.sampled) rows do not, which have no column (\(fields)): --format json or ndjson shows them"
    }

    /// One JSON value a line: an object's members as `{"key": K, "value": V}` (query's
    /// own form), a list's elements, nothing for null, anything else as itself.
    static func lines(_ value: JSONValue) -> String {
        var out = ""
        switch value {
        case .null: break
        case .object(let members):
            for (key, member) in members { out += JSONValue.object([("key", .string(key)), ("value", member)]).serialized() + "\n" }
        case .array(let elements):
            for element in elements { out += element.serialized() + "\n" }
        default:
            out = value.serialized() + "\n"
        }
        return out
    }

    /// One row of `csv` or `tsv`, with its line ending.
    func line(_ cells: [DataTable.Cell?]) -> String {
        switch self {
        case .tsv: return cells.map { OutputFormat.tsvField($0?.text ?? "") }.joined(separator: "\t") + "\n"
        default: return cells.map { OutputFormat.csvField($0?.text ?? "") }.joined(separator: ",") + "\r\n"
        }
    }

    /// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
    static func csvField(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// TSV has no quoting: a tab, a line break or a backslash is written as its escape
    /// (`\t`, `\n`, `\r`, `\\`), as PostgreSQL's and MySQL's text formats do.
    static func tsvField(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == UInt8(ascii: "\\") }) else { return text }
        var out = ""
        for character in text.unicodeScalars {
            switch character {
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\\": out += "\\\\"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    // MARK: table

    /// The narrowest a column is cut to before columns are left out.
    static let narrowest = 4
    static let gap = "  "

    /// Columns padded to their widest cell (numbers to the right), under a header and a
    /// rule, then the number of rows. Wider than `width`, the widest columns are cut (a
    /// cell's end becomes …); when even the narrowest do not fit, the last columns are left
    /// out and the footer says how many.
    static func aligned(_ table: DataTable, width: Int?, color: Bool) -> String {
        let count = table.rows.count
        let footer = "(\(count) \(count == 1 ? "row" : "rows"))\n"
        guard !table.rows.isEmpty else { return footer }
        var texts: [[String]] = [table.columns.map(escaped)]
        var widths = texts[0].map { DisplayWidth.of($0) }
        var numeric = Array(repeating: true, count: table.columns.count)
        for row in table.rows {
            var line: [String] = []
            for (column, cell) in row.enumerated() {
                let text = cell.map { escaped($0.text) } ?? ""
                if let cell, case .number = cell {} else if cell != nil { numeric[column] = false }
                widths[column] = max(widths[column], DisplayWidth.of(text))
                line.append(text)
            }
            texts.append(line)
        }
        var shown = table.columns.count
        if let width {
            fit(&widths, shown: &shown, into: width)
        }
        var out = ""
        for (index, line) in texts.enumerated() {
            var cells: [String] = []
            for column in 0..<shown {
                var text = line[column]
                var used = DisplayWidth.of(text)
                if used > widths[column] {
                    let (cut, cutWidth) = DisplayWidth.prefix(text, fitting: widths[column] - 1)
                    text = cut + "…"
                    used = cutWidth + 1
                }
                let pad = String(repeating: " ", count: widths[column] - used)
                let last = column == shown - 1
                if numeric[column] { cells.append(pad + text) } else { cells.append(last ? text : text + pad) }
            }
            var row = cells.joined(separator: gap)
            // Padding of empty cells at the end, not data: nothing after the last text.
            while row.hasSuffix(" ") { row.removeLast() }
            if index == 0 {
                if color { row = "\u{1B}[1m" + row + "\u{1B}[0m" }
                out += row + "\n"
                out += widths.prefix(shown).map { String(repeating: "─", count: $0) }.joined(separator: gap) + "\n"
            } else {
                out += row + "\n"
            }
        }
        let hidden = table.columns.count - shown
        if hidden > 0 {
            let names = table.columns.suffix(hidden).joined(separator: ", ")
            return out + "(\(count) \(count == 1 ? "row" : "rows"); \(hidden) \(hidden == 1 ? "column" : "columns") left out, past the terminal's width: \(names))\n"
        }
        return out + footer
    }

    /// Fits the row in `width`: as many columns as fit at `narrowest` (the first always
    /// stays), then every column wider than one cap cut to it, the widest cap that fits, so
    /// wide columns share the cut; what is left over widens the cut ones from the left.
    private static func fit(_ widths: inout [Int], shown: inout Int, into width: Int) {
        let gaps = { (count: Int) in gap.count * max(0, count - 1) }
        guard widths.reduce(0, +) + gaps(widths.count) > width else { return }
        shown = 1
        var least = min(widths[0], narrowest)
        while shown < widths.count, least + min(widths[shown], narrowest) + gaps(shown + 1) <= width {
            least += min(widths[shown], narrowest)
            shown += 1
        }
        let natural = Array(widths.prefix(shown))
        let room = width - gaps(shown)
        func total(_ cap: Int) -> Int { natural.reduce(0) { $0 + min($1, cap) } }
        guard total(natural.max() ?? 0) > room else { return }
        var low = narrowest, high = natural.max() ?? narrowest
        while low < high {
            let cap = (low + high + 1) / 2
            if total(cap) <= room { low = cap } else { high = cap - 1 }
        }
        var spare = room - total(low)
        for index in natural.indices {
            widths[index] = min(natural[index], low)
            if natural[index] > low && spare > 0 {
                widths[index] += 1
                spare -= 1
            }
        }
    }

    /// A cell on one line: control characters as JSON escapes them.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
