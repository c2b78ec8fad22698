import Foundation
#if canImport(Glibc)
import Glibc
#endif
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

    /// `RTDB_RC`, or `~/.rtdbrc`: commands run when an interactive session starts.
    public static var startupFile: String {
        ProcessEnvironment.nonEmpty("RTDB_RC") ?? ProcessEnvironment.home + "/.rtdbrc"
    }

    /// `RTDB_HISTFILE`, or `~/.rtdb_history`.
    public static var historyFile: String {
        ProcessEnvironment.nonEmpty("RTDB_HISTFILE") ?? ProcessEnvironment.home + "/.rtdb_history"
    }

    @MainActor
    public func run() async -> ExitStatus {
        let shell = self.shell
        let repo = shell.repo
        // The shell's core at the time of asking: `use` replaces it.
        let completer = Completer(childKeys: { path in Completer.childKeys(of: path, in: { await shell.repo }) },
                                  childFields: { path in Completer.childFields(of: path, in: { await shell.repo }) })
        // Styled as typed at a colour terminal that moves its cursor (not a dumb one, as an
        // editor's shell buffer is).
        let decorated = shell.options.renderer.color && ProcessEnvironment.value("TERM") != "dumb"
        let reader = LineReader(historyFile: InteractiveSession.historyFile, completer: completer, decorated: decorated)
        for line in await reader.entries() { shell.recordHistory(line) }
        let dim = shell.options.renderer.color ? "\u{1B}[2m" : ""
        let reset = shell.options.renderer.color ? "\u{1B}[0m" : ""
        let remote = location.hasPrefix("ws")
        // A shell started offline from its cache says so; the prompt follows the connection.
        let place = !remote ? "embedded database in \(location)"
            : await repo.isConnected ? "connected to \(location)" : "offline, reconnecting to \(location)"
        shell.output.write("\(dim)rtdb: \(place). Type 'help' for commands, Ctrl-D to leave.\(reset)\n")
        let print = shell.options.backgroundOutput ?? { _ in }
        // Until `use` moves the shell to another namespace's core.
        let followed: @Sendable (Repo) async -> Bool = { repo in await shell.repo === repo }
        var notices = remote ? ConnectionNotices.start(repo: repo, followed: followed, print: print) : nil
        var noticed = repo
        defer { notices?.cancel() }
        await runStartupFile()
        while true {
            let repo = shell.repo
            if remote && repo !== noticed {
                // `use` moved to another namespace: its connection is the one to follow.
                notices?.cancel()
                notices = ConnectionNotices.start(repo: repo, followed: followed, print: print)
                noticed = repo
            }
            let connected = await repo.isConnected
            let offline = await repo.isOfflineByChoice || !connected
            let state = offline ? "(offline)" : ""
            // A server's namespace is named (`use` changes it); an embedded database has one.
            let namespace = shell.options.namespaces.map { "@" + $0.name } ?? ""
            let prompt = "rtdb\(namespace)\(state):\(shell.cwd)> "
            switch await reader.readLine(prompt: prompt, cwd: shell.cwd) {
            case .end:
                shell.output.write("\n")
                return await finish()
            case .cancelled:
                continue
            case .line(let line):
                var trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty { continue }
                // A value left open ({, [ or a quote) goes on at a continuation prompt;
                // Ctrl-C abandons it, Ctrl-D too (and leaves).
                let more = String(repeating: " ", count: max(0, prompt.count - 5)) + "...> "
                var abandoned = false
                while Tokenizer.isUnfinished(trimmed) && trimmed.utf8.count <= ValueParser.maxWriteBytes {
                    guard case .line(let next) = await reader.readLine(prompt: more, cwd: shell.cwd, continuing: true) else {
                        abandoned = true
                        break
                    }
                    trimmed += "\n" + next
                }
                if abandoned { continue }
                reader.remember(trimmed)
                shell.recordHistory(trimmed)
                // The terminal echoes ^C; the next output starts on a line of its own.
                let newline: @Sendable () -> Void = { StandardOutput.writeAll("\n") }
                if await Interrupt.cancellable(interrupted: newline, { await shell.run(trimmed) }) == .exit {
                    return await finish()
                }
            }
        }
    }

    /// Runs `startupFile` when there is one: every line, errors reported with the file's
    /// name and line, none kept in the history.
    @MainActor
    private func runStartupFile() async {
        let path = InteractiveSession.startupFile
        guard let data = FileManager.default.contents(atPath: path) else { return }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init).makeIterator()
        let shell = self.shell
        let home = ProcessEnvironment.home
        let name = path.hasPrefix(home + "/") ? "~" + path.dropFirst(home.count) : path
        _ = await Interrupt.cancellable {
            await BatchRunner(keepGoing: true).runLines({ lines.next() }, shell: shell, remember: false) { "\(name) line \($0)" }
        }
    }

    @MainActor
    private func finish() async -> ExitStatus {
        let shell = self.shell
        return await Interrupt.cancellable { await shell.finishWrites() } ? .success : .unacknowledgedWrites
    }
}

/// Says above the prompt when the connection to a server is lost and when it is back.
enum ConnectionNotices {
    /// `followed` says whether the shell still uses `repo`: once it does not, its connection's
    /// end is not news.
    static func start(repo: Repo, followed: @escaping @Sendable (Repo) async -> Bool,
                      print: @escaping @Sendable (String) -> Void) -> Task<Void, Never> {
        Task {
            var seen = false
            do {
                for try await event in await repo.events(QuerySpec(path: Path(".info/connected")), types: [.value]) {
                    defer { seen = true }
                    guard seen else { continue }  // the state at start is already known
                    guard await followed(repo) else { return }
                    if await repo.isOfflineByChoice {
                        continue  // 'offline' said so itself
                    } else if event.node == Node(true) {
                        print("connected again; listens and queued writes restored")
                    } else if let reason = await repo.shutdownReason {
                        print("the server ended the connection: \(reason)")
                    } else if let reason = await repo.credentialRevoked {
                        print("the server revoked the credential (\(reason)); reconnecting without it")
                    } else {
                        print("connection lost; reconnecting (writes are queued until it is back)")
                    }
                }
            } catch {}
        }
    }
}
