import Foundation
import RTDBClient
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
        let remote = location.hasPrefix("ws")
        let place = remote ? "connected to \(location)" : "embedded database in \(location)"
        shell.output.write("\(dim)rtdb: \(place). Type 'help' for commands, Ctrl-D to leave.\(reset)\n")
        let notices = remote ? ConnectionNotices(shell: shell) : nil
        defer { notices?.stop() }
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

/// Says above the prompt when the connection to a server is lost and when it is back.
final class ConnectionNotices: @unchecked Sendable {
    private let shell: Shell
    private let query = QuerySpec(path: Path(".info/connected"))
    private var registration: EventRegistration!
    private var seen = false

    init(shell: Shell) {
        self.shell = shell
        let print = shell.options.backgroundOutput ?? { _ in }
        let repo = shell.repo
        let notices = DispatchQueue(label: "rtdb.connection-notices")
        registration = EventRegistration(types: [.value], callback: { [weak self] event in
            guard let self else { return }
            let connected = event.node == Node(true)
            defer { seen = true }
            guard seen else { return }  // the state at start is already known
            // Events arrive on the client's queue; asking it for the reason must not block it.
            notices.async {
                if connected {
                    print("connected again; listens and queued writes restored")
                } else if let reason = repo.shutdownReason {
                    print("the server ended the connection: \(reason)")
                } else if let reason = repo.credentialRevoked {
                    print("the server revoked the credential (\(reason)); reconnecting without it")
                } else {
                    print("connection lost; reconnecting (writes are queued until it is back)")
                }
            }
        }, cancel: { _ in })
        repo.listen(query, registration)
    }

    func stop() { shell.repo.unlisten(query, registration) }
}

/// Questions asked on the terminal.
public enum Terminal {
    public static func confirm(_ question: String) -> Bool {
        FileHandle.standardError.write(Data(question.utf8))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }
}
