import CEditLine
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// libedit on the terminal: prompt, emacs-style editing, history and Tab completion.
///
/// Characters are read by our own function (`EL_GETCFN`) that `poll`s stdin and a self-pipe,
/// so that Ctrl-C (a signal) can cancel the line being typed instead of ending the shell.
final class LineEditor {
    private var editLine: OpaquePointer!
    private var history: OpaquePointer!
    private var promptBuffer: UnsafeMutablePointer<CChar>?
    private let historyFile: String?
    /// Given the text before the cursor: how many characters before the cursor to delete,
    /// what to insert there, and the choices to list when there is nothing to insert.
    var complete: ((String) -> (delete: Int, insert: String, list: [String]))?
    /// Given the whole line: the line with its styles (the same characters, with escape
    /// sequences), what to show dimmed after it when the cursor is at its end, and whether
    /// that is a suggestion → or End accepts (not a usage). Nil: the line as libedit draws it.
    var decorate: ((String) -> (styled: String, hint: String?, accepts: Bool))?
    /// Whether this line is decorated (not a continuation line, which is part of a value).
    private var decorating = false
    /// libedit's incremental search (Ctrl-R, Ctrl-S) draws a line of its own: not decorated
    /// from the key that starts it to the first key that is not part of it.
    private var searching = false
    fileprivate var cancelled = false

    /// The prompt's text, for measuring where the input line starts.
    private var promptText = ""

    init(program: String, historyFile: String?) {
        self.historyFile = historyFile
        // libedit turns the wide characters our reader decodes into the line's bytes with the
        // C library's multibyte conversion, which in the default "C" locale drops everything
        // that is not ASCII: a typed "é" vanished from the line. The reader reads UTF-8, so
        // the conversion must write UTF-8, whatever the user's locale says.
        if setlocale(LC_CTYPE, "C.UTF-8") == nil { _ = setlocale(LC_CTYPE, "") }
        editLine = rtdb_el_init(program)
        history = rtdb_history_init(1000)
        rtdb_el_set_history(editLine, history)
        rtdb_el_set_editor(editLine, "emacs")
        // libedit's own signal handling re-raises SIGINT to the whole process group; we
        // handle SIGINT and SIGWINCH ourselves through the interrupt pipe instead.
        rtdb_el_set_signal(editLine, 0)
        rtdb_el_set_clientdata(editLine, Unmanaged.passUnretained(self).toOpaque())
        rtdb_el_set_prompt(editLine) { el in
            let editor = LineEditor.from(el)
            return editor.promptBuffer
        }
        rtdb_el_set_getc(editLine) { el, out in
            LineEditor.readCharacter(el!, out!)
        }
        rtdb_el_add_function(editLine, "rtdb-complete", "complete the word") { el, _ in
            LineEditor.from(el).completeWord()
        }
        rtdb_el_add_function(editLine, "rtdb-cancel", "discard the line") { el, _ in
            let editor = LineEditor.from(el)
            editor.cancelled = true
            editor.drawDecorated(hint: false, atEnd: true)
            return UInt8(CC_NEWLINE)
        }
        rtdb_el_add_function(editLine, "rtdb-newline", "enter the line") { el, _ in
            LineEditor.from(el).enter()
        }
        rtdb_el_add_function(editLine, "rtdb-forward", "accept the suggestion, or move right") { el, _ in
            LineEditor.from(el).acceptOrMove(toEnd: false)
        }
        rtdb_el_add_function(editLine, "rtdb-end", "accept the suggestion, or go to the end") { el, _ in
            LineEditor.from(el).acceptOrMove(toEnd: true)
        }
        rtdb_el_bind(editLine, "^I", "rtdb-complete")
        rtdb_el_bind(editLine, "^C", "rtdb-cancel")
        for key in ["\\e[C", "\\eOC", "^F"] { rtdb_el_bind(editLine, key, "rtdb-forward") }
        for key in ["\\e[F", "\\eOF", "\\e[4~", "\\e[8~", "^E"] { rtdb_el_bind(editLine, key, "rtdb-end") }
        if let historyFile { rtdb_history_load(history, historyFile) }
        remembered = entries
        InterruptPipe.install()
        AsyncLines.setUp()
    }

    deinit {
        el_end(editLine)
        history_end(history)
        free(promptBuffer)
    }

    private static func from(_ el: OpaquePointer?) -> LineEditor {
        Unmanaged<LineEditor>.fromOpaque(rtdb_el_get_clientdata(el)!).takeUnretainedValue()
    }

    enum Input { case line(String), cancelled, end }

    /// Reads one line; `.end` at Ctrl-D on an empty line. `decorated`: styled as it is typed.
    func readLine(prompt: String, decorated: Bool = true) -> Input {
        free(promptBuffer)
        promptBuffer = strdup(prompt)
        promptText = prompt
        cancelled = false
        decorating = decorated && decorate != nil
        searching = false
        // Enter clears the hint of a decorated line before the line ends; any other line
        // ends as libedit ends it.
        for key in ["^M", "^J"] { rtdb_el_bind(editLine, key, decorating ? "rtdb-newline" : "ed-newline") }
        var count: Int32 = 0
        AsyncLines.editing(true)
        let raw = el_gets(editLine, &count)
        AsyncLines.editing(false)
        // Ctrl-C: our bound function ends the read; libedit may hand back nothing.
        if cancelled {
            FileHandle.standardOutput.write(Data("^C\n".utf8))
            return .cancelled
        }
        guard let raw else { return .end }
        // As many bytes as libedit counts: a line ended by our own function (Enter on a
        // decorated line) is not terminated in libedit's buffer, where an earlier, longer
        // line's end may still be.
        var line = String(decoding: UnsafeRawBufferPointer(start: raw, count: Int(max(0, count))), as: UTF8.self)
        if line.hasSuffix("\n") { line.removeLast() }
        return .line(line)
    }

    /// The history, oldest first, as suggestions are taken from it.
    private(set) var remembered: [String] = []

    /// Every remembered line, oldest first (including earlier sessions').
    var entries: [String] {
        var lines: [String] = []
        var entry = rtdb_history_oldest(history)
        while let line = entry {
            lines.append(String(cString: line))
            entry = rtdb_history_newer(history)
        }
        return lines
    }

    /// Adds a line to the history (and the file), unless it may hold a credential.
    func remember(_ line: String) {
        guard !HistoryFilter.isSensitive(line) else { return }
        rtdb_history_enter(history, line)
        remembered.append(line)
        guard let historyFile else { return }
        // Create it private before writing, and keep it that way.
        let fd = open(historyFile, O_WRONLY | O_CREAT, 0o600)
        if fd >= 0 { close(fd) }
        rtdb_history_save(history, historyFile)
        chmod(historyFile, 0o600)
    }

    // MARK: Decoration

    /// The line libedit holds: its text, and its text before the cursor.
    private func currentLine() -> (line: String, before: String)? {
        guard let info = el_line(editLine)?.pointee else { return nil }
        let length = info.lastchar - info.buffer, at = info.cursor - info.buffer
        guard length >= 0, at >= 0, at <= length else { return nil }
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(info.buffer).assumingMemoryBound(to: UInt8.self), count: length)
        return (String(decoding: bytes, as: UTF8.self), String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<at]), as: UTF8.self))
    }

    /// Where libedit puts what follows `from` on the screen, rows counted from the prompt's
    /// first: wcwidth's widths (as libedit's), a character that does not fit in what is left
    /// of a row starting the next, and a row filled to its last column sending the cursor to
    /// the next row's start.
    private static func advance(_ from: (row: Int, column: Int), over text: String, columns: Int) -> (row: Int, column: Int) {
        var at = from
        for scalar in text.unicodeScalars {
            let width = Int(rtdb_wcwidth(wchar_t(bitPattern: scalar.value)))
            guard width > 0 else { continue }
            if at.column + width > columns { at = (at.row + 1, 0) }
            at.column += width
            if at.column >= columns { at = (at.row + 1, 0) }
        }
        return at
    }

    /// Where libedit has the cursor (after the prompt and `before`) and where `line` ends.
    private func layout(_ line: String, _ before: String, columns: Int) -> (cursor: (row: Int, column: Int), end: (row: Int, column: Int)) {
        let start = LineEditor.advance((0, 0), over: promptText, columns: columns)
        let cursor = LineEditor.advance(start, over: before, columns: columns)
        return (cursor, LineEditor.advance(cursor, over: String(line.utf8.dropFirst(before.utf8.count)) ?? "", columns: columns))
    }

    /// Draws the line again over what libedit drew: the same characters in the same cells,
    /// with their styles, and the hint after the end on the line's last row. libedit keeps
    /// its own picture of the screen, which this leaves true: the cursor goes back where
    /// libedit has it (or, `atEnd`, after the line, for Enter). Returns false, drawing
    /// nothing, for a line libedit shows its own way (a control character in it, during a
    /// search) or that does not fit on the screen (moving up past its top is not possible).
    @discardableResult
    private func drawDecorated(hint showHint: Bool, atEnd: Bool = false) -> Bool {
        guard decorating, !searching, let decorate, let (line, before) = currentLine(), let size = Terminal.size(),
              !LineHighlighter.hasControl(line) else { return false }
        let columns = size.columns
        var (cursor, end) = layout(line, before, columns: columns)
        guard end.row < size.rows - 1 else { return false }
        let (styled, hint, _) = decorate(line)
        // From where libedit left the cursor to the prompt's first row.
        var out = cursor.row > 0 ? "\u{1B}[\(cursor.row)A\r" : "\r"
        out += promptText + styled
        if end.column == 0 && end.row > 0 {
            // Filled to its last column, the row waits to wrap: a space wraps it, and goes.
            out += " \r"
        }
        if showHint, before.utf8.count == line.utf8.count, let hint, !LineHighlighter.hasControl(hint) {
            // On the last row only, its last column left free: libedit does not know it is there.
            var shown = ""
            var column = end.column
            for scalar in hint.unicodeScalars {
                let width = max(0, Int(rtdb_wcwidth(wchar_t(bitPattern: scalar.value))))
                if column + width > columns - 1 { break }
                column += width
                shown.unicodeScalars.append(scalar)
            }
            if !shown.isEmpty {
                out += LineHighlighter.dimmed(shown)
                end.column = column
            }
        }
        out += "\u{1B}[J"
        let target = atEnd ? (row: end.row, column: 0) : cursor
        if end.row > target.row { out += "\u{1B}[\(end.row - target.row)A" }
        out += "\r"
        if !atEnd && target.column > 0 { out += "\u{1B}[\(target.column)C" }
        StandardOutput.writeAll(out)
        return true
    }

    /// Follows libedit's incremental search: Ctrl-R and Ctrl-S start it; text, Backspace,
    /// Ctrl-W and those keys again go on with it; any other key ends it.
    private func noteKey(_ scalar: UInt32) {
        switch scalar {
        case 0x12, 0x13:
            // The search draws its own line below: the hint goes first.
            drawDecorated(hint: false)
            searching = true
        case 0x08, 0x17, 0x7F: break
        case ..<0x20: searching = false
        default: break
        }
    }

    /// Enter on a decorated line: the line drawn without its hint, and a new line after it
    /// (libedit starts its next line afresh). A line not drawn is left as libedit drew it,
    /// the cursor taken below its last row first, as libedit's own Enter does.
    private func enter() -> UInt8 {
        if drawDecorated(hint: false, atEnd: true) {
            StandardOutput.writeAll("\r\n")
        } else if let (line, before) = currentLine(), let columns = Terminal.size()?.columns {
            let (cursor, end) = layout(line, before, columns: columns)
            let down = end.row - cursor.row
            StandardOutput.writeAll((down > 0 ? "\u{1B}[\(down)B" : "") + "\r\n")
        } else {
            StandardOutput.writeAll("\r\n")
        }
        return UInt8(CC_NEWLINE)
    }

    /// → and End (Ctrl-F, Ctrl-E) at the end of the line take the suggestion shown; anywhere
    /// else they move as they do.
    private func acceptOrMove(toEnd: Bool) -> UInt8 {
        if decorating, let (line, before) = currentLine(), before.utf8.count == line.utf8.count,
           let decorate, case (_, let hint?, true) = decorate(line), !hint.isEmpty {
            el_insertstr(editLine, hint)
            return UInt8(CC_REFRESH)
        }
        guard let info = el_line(editLine)?.pointee else { return UInt8(CC_ERROR) }
        // In characters, as libedit counts them; never past the line's end.
        let after = String(decoding: UnsafeBufferPointer(start: UnsafeRawPointer(info.cursor).assumingMemoryBound(to: UInt8.self),
                                                         count: max(0, info.lastchar - info.cursor)), as: UTF8.self).unicodeScalars.count
        el_cursor(editLine, Int32(clamping: toEnd ? after : min(1, after)))
        return UInt8(CC_CURSOR)
    }

    // MARK: Callbacks

    private func completeWord() -> UInt8 {
        guard let info = el_line(editLine)?.pointee, let complete else { return UInt8(CC_ERROR) }
        let length = info.cursor - info.buffer
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(info.buffer).assumingMemoryBound(to: UInt8.self), count: length)
        let before = String(decoding: bytes, as: UTF8.self)
        let (delete, insert, list) = complete(before)
        // A list goes below the line: not below a hint, which would stay on the screen.
        if insert.isEmpty && !list.isEmpty { drawDecorated(hint: false) }
        if !insert.isEmpty {
            if delete > 0 { el_deletestr(editLine, Int32(clamping: delete)) }
            el_insertstr(editLine, insert)
            return UInt8(CC_REFRESH)
        }
        guard !list.isEmpty else { return UInt8(CC_REFRESH_BEEP) }
        // Several choices and nothing shared to add: show them under the line.
        let width = Terminal.width
        let column = min(width, (list.map(\.count).max() ?? 0) + 2)
        let perRow = max(1, width / max(1, column))
        var text = "\n"
        for (i, item) in list.prefix(200).enumerated() {
            text += item.padding(toLength: column, withPad: " ", startingAt: 0)
            if (i + 1) % perRow == 0 { text += "\n" }
        }
        if list.count > 200 { text += "\n… and \(list.count - 200) more" }
        if !text.hasSuffix("\n") { text += "\n" }
        FileHandle.standardOutput.write(Data(text.utf8))
        return UInt8(CC_REDISPLAY)
    }

    /// Prints lines above the prompt and redraws the prompt with the half-typed line intact.
    private func printAbove(_ lines: [String]) {
        guard !lines.isEmpty, let info = el_line(editLine)?.pointee else { return }
        let columns = Terminal.width
        let before = String(decoding: UnsafeBufferPointer(start: UnsafeRawPointer(info.buffer).assumingMemoryBound(to: UInt8.self),
                                                          count: info.cursor - info.buffer), as: UTF8.self)
        let rows = (promptText.count + before.count) / max(1, columns)
        var text = rows > 0 ? "\u{1B}[\(rows)A" : ""
        text += "\r\u{1B}[J"  // clear to the end of the screen: wrapped input rows too
        for line in lines { text += line.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n" }
        StandardOutput.writeAll(text)
        rtdb_el_refresh(editLine)
    }

    /// Reads one character: UTF-8 from stdin, or Ctrl-C when the interrupt pipe fires.
    private static func readCharacter(_ el: OpaquePointer, _ out: UnsafeMutablePointer<wchar_t>) -> Int32 {
        var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: InterruptPipe.readEnd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: AsyncLines.readEnd, events: Int16(POLLIN), revents: 0)]
        while true {
            // Keys already waiting (a paste, typing ahead) are read first: the line is drawn
            // again once, when they are all in.
            var waiting = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            if poll(&waiting, 1, 0) <= 0 { LineEditor.from(el).drawDecorated(hint: true) }
            let ready = poll(&fds, 3, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return -1
            }
            if fds[1].revents & Int16(POLLIN) != 0 {
                let signals = InterruptPipe.drain()
                if signals.contains(InterruptPipe.resized) { el_resize(el) }
                if signals.contains(InterruptPipe.interrupted) {
                    out.pointee = 3  // ^C, bound to rtdb-cancel
                    return 1
                }
                continue
            }
            if fds[2].revents & Int16(POLLIN) != 0 {
                LineEditor.from(el).printAbove(AsyncLines.take())
                continue
            }
            if fds[0].revents & Int16(POLLIN | POLLHUP) != 0 { break }
        }
        var first: UInt8 = 0
        let n = read(STDIN_FILENO, &first, 1)
        if n <= 0 { return n == 0 ? 0 : -1 }
        var scalar = UInt32(first)
        var more = 0
        if first >= 0xF0 { more = 3; scalar &= 0x07 } else if first >= 0xE0 { more = 2; scalar &= 0x0F } else if first >= 0xC0 { more = 1; scalar &= 0x1F }
        for _ in 0..<more {
            var next: UInt8 = 0
            guard read(STDIN_FILENO, &next, 1) == 1 else { break }
            scalar = (scalar << 6) | UInt32(next & 0x3F)
        }
        out.pointee = wchar_t(bitPattern: scalar)
        LineEditor.from(el).noteKey(scalar)
        return 1
    }
}
