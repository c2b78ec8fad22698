import ArgumentParser
import Foundation
import RTDBShell
#if canImport(Glibc)
import Glibc
#endif

@main
struct RTDBCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtdb",
        abstract: "An interactive shell for realtime JSON databases.",
        discussion: """
        With no COMMAND, rtdb opens the embedded database and reads commands: at a prompt with \
        line editing on a terminal, or one per line from standard input otherwise. With a \
        COMMAND (get, set, update, push, rm, ls, …) it runs that one command and exits.

        The embedded database lives in a data folder: --data DIR, or by default \
        $XDG_DATA_HOME/rtdb/default (~/.local/share/rtdb/default). With --url \
        ws://127.0.0.1:9000?ns=demo (or --emulator HOST:PORT) the shell talks to a server instead; \
        wss:// and https:// use TLS (hosted Firebase: https://NAME.firebaseio.com). A credential \
        comes from RTDB_ACCESS_TOKEN (OAuth2 access token) or RTDB_AUTH_TOKEN (ID token, \
        database secret); lost connections are re-established and queued writes sent.

        rtdb serve [--host 127.0.0.1] [--port 9000] [--data DIR] [--tls-cert FILE --tls-key FILE] \
        runs the local server: the realtime protocol over WebSocket and the REST API, one \
        database per namespace ('rtdb serve --help' lists its options).

        rtdb completions bash|zsh|fish prints a completion script for that shell.

        Exit status: 0 success; 1 a command failed; 2 bad usage; 3 the database could not be \
        opened; 4 writes were not acknowledged before exit. Type 'help' in the shell for the \
        commands.
        """)

    @Option(name: .long, help: ArgumentHelp("The embedded database's data folder.", valueName: "DIR"))
    var data: String?

    @Option(name: .customShort("c"), help: ArgumentHelp("Run COMMAND and exit (repeatable; run in order).", valueName: "COMMAND"))
    var commands: [String] = []

    @Option(name: .long, help: ArgumentHelp("A server's database URL: ws://127.0.0.1:9000?ns=demo (also http://…), or https://NAME.firebaseio.com.", valueName: "URL"))
    var url: String?

    @Option(name: .long, help: ArgumentHelp("A local server or the Firebase emulator (as FIREBASE_DATABASE_EMULATOR_HOST).", valueName: "HOST:PORT"))
    var emulator: String?

    @Option(name: .long, help: ArgumentHelp("The namespace (database name) with --emulator.", valueName: "NAME"))
    var ns: String?

    @Option(name: .long, help: ArgumentHelp("With wss:// or https://, trust the certificates in this PEM file instead of the system's.", valueName: "FILE"))
    var cacert: String?

    @Flag(name: .long, help: "In a script, run the remaining lines after an error (the exit status still says it failed).")
    var keepGoing = false

    @Flag(name: .customLong("no-color"), help: "No colour, even on a terminal (also: NO_COLOR set).")
    var noColor = false

    @Flag(name: .long, help: "Salvage a damaged embedded database: keep every record that can be read, move the damaged files aside, say what was lost, and exit.")
    var recover = false

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("A shell command to run once, e.g. get /users --json.", valueName: "COMMAND"))
    var words: [String] = []

    /// Usage errors exit with 2 (as documented), not ArgumentParser's 64.
    static func main() async {
        do {
            let command = try parse()
            try await command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n" + usageLine).utf8))
                Foundation.exit(ExitStatus.usage.rawValue)
            }
            exit(withError: error)
        }
    }

    static let usageLine = "Usage: rtdb [--data DIR] [-c COMMAND ...] [--keep-going] [--no-color] [COMMAND ...]\nSee 'rtdb --help'.\n"

    func run() async throws {
        // The pass-through argument captures everything, --help included.
        if let first = words.first, ["-h", "--help", "-help"].contains(first) {
            print(Self.helpMessage())
            return
        }
        if words.first == "completions" {
            guard words.count == 2, let script = CompletionScript.script(for: words[1]) else {
                let problem = words.count == 2 ? "rtdb completions: no completion script for '\(words[1])'\n" : ""
                FileHandle.standardError.write(Data((problem + "Usage: rtdb completions bash|zsh|fish\n").utf8))
                throw ExitCode(ExitStatus.usage.rawValue)
            }
            print(script, terminator: "")
            return
        }
        if words.first == "serve" {
            let defaultFolder = data.map { ($0 as NSString).expandingTildeInPath } ?? EmbeddedDatabase.defaultServerFolder
            throw ExitCode(Serve.run(Array(words.dropFirst()), defaultFolder: defaultFolder).rawValue)
        }
        // Options after the command belong to it; an unknown one before it is a usage error.
        if let first = words.first, first.hasPrefix("-") {
            FileHandle.standardError.write(Data("Error: Unknown option '\(first)'\n\(Self.usageLine)".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let folder = data.map { ($0 as NSString).expandingTildeInPath } ?? EmbeddedDatabase.defaultFolder
        if recover {
            throw ExitCode(Recover.run(folders: [folder]).rawValue)
        }
        let connection: DatabaseConnection
        do {
            if let address = try RemoteDatabase.address(url: url, emulator: emulator, namespace: ns) {
                connection = try await RemoteDatabase.connect(address: address, trustedCertificates: cacert.map { ($0 as NSString).expandingTildeInPath },
                                                              credential: .fromEnvironment())
            } else {
                connection = try EmbeddedDatabase(folder: folder)
            }
        } catch {
            FileHandle.standardError.write(Data("rtdb: \(error)\n".utf8))
            throw ExitCode(ExitStatus.unavailable.rawValue)
        }
        let status = await runShell(connection)
        await connection.close()
        throw ExitCode(status.rawValue)
    }

    @MainActor
    private func runShell(_ connection: DatabaseConnection) async -> ExitStatus {
        let stdinIsTerminal = isatty(STDIN_FILENO) == 1
        let stdoutIsTerminal = isatty(STDOUT_FILENO) == 1
        let color = stdoutIsTerminal && !noColor && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        var options = Shell.Options()
        options.renderer = stdoutIsTerminal ? Renderer(pretty: true, color: color) : .machine
        let output = StandardOutput()

        if !words.isEmpty || !commands.isEmpty {
            // One-shot: rtdb get /a, or -c 'CMD' (repeatable).
            options.waitForWrites = false
            if stdinIsTerminal && stdoutIsTerminal { options.confirm = { Terminal.confirm($0) } }
            let shell = Shell(repo: connection.repo, output: output, options: options)
            if !words.isEmpty {
                let words = self.words
                let outcome = await Interrupt.cancellable { await shell.run(arguments: words) }
                return await BatchRunner.finish(shell, failed: outcome == .failed)
            }
            var next = commands.makeIterator()
            return await BatchRunner(keepGoing: keepGoing).run({ next.next() }, shell: shell) { "-c \($0)" }
        }
        if stdinIsTerminal && stdoutIsTerminal {
            options.confirm = Terminal.confirm
            options.backgroundOutput = AsyncLines.post
            let shell = Shell(repo: connection.repo, output: output, options: options)
            return await InteractiveSession(shell: shell, location: connection.location).run()
        }
        options.waitForWrites = false
        let shell = Shell(repo: connection.repo, output: output, options: options)
        let input = StandardInputLines()
        return await BatchRunner(keepGoing: keepGoing).run({ await input.next() }, shell: shell) { "line \($0)" }
    }
}
