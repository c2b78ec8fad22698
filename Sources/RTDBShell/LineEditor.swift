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
            return UInt8(CC_NEWLINE)
        }
        rtdb_el_bind(editLine, "^I", "rtdb-complete")
        rtdb_el_bind(editLine, "^C", "rtdb-cancel")
        if let historyFile { rtdb_history_load(history, historyFile) }
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

    /// Reads one line; `.end` at Ctrl-D on an empty line.
    func readLine(prompt: String) -> Input {
        free(promptBuffer)
        promptBuffer = strdup(prompt)
        promptText = prompt
        cancelled = false
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
        var line = String(cString: raw)
        if line.hasSuffix("\n") { line.removeLast() }
        return .line(line)
    }

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
        guard let historyFile else { return }
        // Create it private before writing, and keep it that way.
        let fd = open(historyFile, O_WRONLY | O_CREAT, 0o600)
        if fd >= 0 { close(fd) }
        rtdb_history_save(history, historyFile)
        chmod(historyFile, 0o600)
    }

    // MARK: Callbacks

    private func completeWord() -> UInt8 {
        guard let info = el_line(editLine)?.pointee, let complete else { return UInt8(CC_ERROR) }
        let length = info.cursor - info.buffer
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(info.buffer).assumingMemoryBound(to: UInt8.self), count: length)
        let before = String(decoding: bytes, as: UTF8.self)
        let (delete, insert, list) = complete(before)
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
        return 1
    }
}
