import RTDBData
import Synchronization

/// A command's standard output on its way through `--format`: the command prints its JSON
/// (as with `--json`), and this writes it in the format. A result is kept until the command
/// ends (`finish`); a stream (watch, monitor) is turned into csv or tsv a line at a time,
/// under the columns it names. Messages pass straight on.
final class FormattedOutput: Output, Sendable {
    private struct State {
        var text = ""
        var headerWritten = false
    }
    private let state = Mutex(State())
    private let format: OutputFormat
    private let target: Output
    /// A stream's columns; nil for a result.
    private let columns: [String]?
    private let width: Int?
    private let color: Bool

    init(_ format: OutputFormat, to target: Output, columns: [String]?, width: Int?, color: Bool) {
        self.format = format
        self.target = target
        self.columns = columns
        self.width = width
        self.color = color
    }

    func write(_ text: String) {
        guard let columns else {
            state.withLock { $0.text += text }
            return
        }
        let out = state.withLock { state -> String in
            state.text += text
            var out = ""
            while let end = state.text.firstIndex(of: "\n") {
                let line = String(state.text[..<end])
                state.text.removeSubrange(...end)
                if !state.headerWritten {
                    out += format.line(columns.map(DataTable.Cell.text))
                    state.headerWritten = true
                }
                out += record(line, columns: columns)
            }
            return out
        }
        if !out.isEmpty { target.write(out) }
    }

    func writeError(_ text: String) { target.writeError(text) }
    func takeWriteFailure() -> String? { target.takeWriteFailure() }

    /// Writes the result the command printed, in the format. Output that is not JSON (a
    /// command with none, as `help`) is written as it is.
    func finish() {
        if columns != nil {
            // A last line without its end.
            if state.withLock({ !$0.text.isEmpty }) { write("\n") }
            return
        }
        let text = state.withLock { state -> String in
            defer { state.text = "" }
            return state.text
        }
        guard !text.isEmpty else { return }
        let value: JSONValue
        if let whole = try? JSONValue.parse(text) {
            value = whole
        } else if let lines = try? text.split(separator: "\n").map({ try JSONValue.parse(String($0)) }) {
            // Several JSON lines: each one a row.
            value = .array(lines)
        } else {
            target.write(text)
            return
        }
        let (out, note) = format.render(value, width: width, color: color)
        target.write(out)
        if let note { target.writeError(note + "\n") }
    }

    /// One record of a stream as a row (a line that is not JSON as it is).
    private func record(_ line: String, columns: [String]) -> String {
        guard let value = try? JSONValue.parse(line) else { return line + "\n" }
        return format.line(DataTable.row((key: nil, value: value), columns: columns).cells)
    }
}
