import Dispatch
import RTDBData

/// The line editor on a thread of its own: libedit blocks while the user types, so it runs
/// on its own serial queue and hands each line over to the shell's task when it is entered.
///
/// `@unchecked Sendable`: the editor (a C handle) is only ever touched on `queue`.
final class LineReader: @unchecked Sendable {
    private let queue = DispatchQueue(label: "rtdb.line-editor")
    private let editor: LineEditor
    /// The shell's current path while a line is typed, for completing relative paths.
    private var cwd = Path.root

    /// `decorated`: lines are styled as they are typed, with suggestions (a colour terminal).
    init(historyFile: String, completer: Completer, decorated: Bool) {
        editor = LineEditor(program: "rtdb", historyFile: historyFile)
        if decorated {
            editor.decorate = { [unowned self] line in
                let styled = LineHighlighter.highlight(line, cwd: cwd)
                if let suggestion = LineHighlighter.suggestion(line, history: editor.remembered) { return (styled, suggestion, true) }
                return (styled, LineHighlighter.usageHint(line), false)
            }
        }
        editor.complete = { [unowned self] before in
            let completion = completer.complete(before, cwd: cwd)
            if completion.replaces {
                // A key found by a part of it takes the place of what was typed.
                if completion.candidates.count == 1 { return (completion.word.unicodeScalars.count, completion.candidates[0], []) }
            } else {
                let common = Completer.commonPrefix(completion.candidates)
                if common.count > completion.word.count {
                    return (0, String(common.dropFirst(completion.word.count)), [])
                }
            }
            // List choices by their last segment, as a shell lists file names.
            let shown = completion.candidates.map { candidate -> String in
                let trimmed = candidate.hasSuffix(" ") ? String(candidate.dropLast()) : candidate
                let body = trimmed.hasSuffix("/") ? String(trimmed.dropLast()) : trimmed
                guard let slash = body.lastIndex(of: "/") else { return trimmed }
                return String(trimmed[trimmed.index(after: slash)...])
            }
            return (0, "", shown.count > 1 ? shown : [])
        }
    }

    /// Every remembered line, oldest first (including earlier sessions').
    func entries() async -> [String] {
        await withCheckedContinuation { done in
            queue.async { [self] in done.resume(returning: editor.entries) }
        }
    }

    /// Shows `prompt` and waits for the user's line; `continuing` a value, it is not styled.
    func readLine(prompt: String, cwd: Path, continuing: Bool = false) async -> LineEditor.Input {
        await withCheckedContinuation { done in
            queue.async { [self] in
                self.cwd = cwd
                done.resume(returning: editor.readLine(prompt: prompt, decorated: !continuing))
            }
        }
    }

    /// Adds a line to the history (and its file), unless it may hold a credential.
    func remember(_ line: String) {
        queue.async { [self] in editor.remember(line) }
    }
}
