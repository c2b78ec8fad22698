import Foundation
import RTDBData

/// The shell at a terminal: a prompt showing the current path, line editing, history kept
/// in a file across sessions, and Tab completion.
public struct InteractiveSession {
    public let shell: Shell
    public let location: String

    public init(shell: Shell, location: String) {
        self.shell = shell
        self.location = location
    }

    /// `RTDB_HISTFILE`, or `~/.rtdb_history`.
    public static var historyFile: String {
        let env = ProcessInfo.processInfo.environment
        if let file = env["RTDB_HISTFILE"], !file.isEmpty { return file }
        return (env["HOME"] ?? NSHomeDirectory()) + "/.rtdb_history"
    }

    public func run() -> ExitStatus {
        let editor = LineEditor(program: "rtdb", historyFile: InteractiveSession.historyFile)
        let shell = self.shell
        for line in editor.entries { shell.recordHistory(line) }
        let completer = Completer { path in
            let semaphore = DispatchSemaphore(value: 0)
            var keys: [(String, Bool)]?
            shell.repo.get(path) { result in
                if case .success(let node) = result {
                    keys = node.children.map { ($0.key.name, !$0.value.isLeaf) }
                }
                semaphore.signal()
            }
            return semaphore.wait(timeout: .now() + 2) == .timedOut ? nil : keys
        }
        editor.complete = { before in
            let completion = completer.complete(before, cwd: shell.cwd)
            let common = Completer.commonPrefix(completion.candidates)
            if common.count > completion.word.count {
                return (String(common.dropFirst(completion.word.count)), [])
            }
            // List choices by their last segment, as a shell lists file names.
            let shown = completion.candidates.map { candidate -> String in
                let trimmed = candidate.hasSuffix(" ") ? String(candidate.dropLast()) : candidate
                let body = trimmed.hasSuffix("/") ? String(trimmed.dropLast()) : trimmed
                guard let slash = body.lastIndex(of: "/") else { return trimmed }
                return String(trimmed[trimmed.index(after: slash)...])
            }
            return ("", shown.count > 1 ? shown : [])
        }
        let dim = shell.options.renderer.color ? "\u{1B}[2m" : ""
        let reset = shell.options.renderer.color ? "\u{1B}[0m" : ""
        let place = location.hasPrefix("ws") ? "connected to \(location)" : "embedded database in \(location)"
        shell.output.write("\(dim)rtdb: \(place). Type 'help' for commands, Ctrl-D to leave.\(reset)\n")
        while true {
            switch editor.readLine(prompt: "rtdb:\(shell.cwd)> ") {
            case .end:
                shell.output.write("\n")
                return shell.finishWrites() ? .success : .unacknowledgedWrites
            case .cancelled:
                continue
            case .line(let line):
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty { continue }
                editor.remember(trimmed)
                shell.recordHistory(trimmed)
                if shell.run(trimmed) == .exit {
                    return shell.finishWrites() ? .success : .unacknowledgedWrites
                }
            }
        }
    }
}

/// Questions asked on the terminal.
public enum Terminal {
    public static func confirm(_ question: String) -> Bool {
        FileHandle.standardError.write(Data(question.utf8))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }
}
