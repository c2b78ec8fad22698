import ArgumentParser
import Foundation
import RTDBProtocol
import RTDBShell
import RTDBTransport
#if canImport(Glibc)
import Glibc
#endif

/// The shell, `rtdb`'s default subcommand: one command from the arguments (`rtdb get /a`),
/// the `-c` commands, a script on standard input, or the interactive prompt. Its options come
/// before the command; what follows the command is the command's.
struct ShellCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "An interactive shell for realtime JSON databases.",
        usage: """
        rtdb [--data <DIR> | --url <URL> | --emulator <HOST:PORT> [--ns <NAME>]] [-c <COMMAND> ...] [--keep-going] [--json] [--format <FORMAT>] [--no-color] [<COMMAND> ...]
          rtdb serve [<options>]
          rtdb completions bash|zsh|fish
        """,
        discussion: """
        With no COMMAND, rtdb opens the embedded database and reads commands: at a prompt with \
        line editing on a terminal, or one per line from standard input otherwise. With a \
        COMMAND (get, set, update, push, rm, ls, …) it runs that one command and exits.

        The embedded database lives in a data folder: --data DIR, or by default \
        $XDG_DATA_HOME/rtdb/default (~/.local/share/rtdb/default). With --url \
        ws://127.0.0.1:9000?ns=demo (or --emulator HOST:PORT) the shell talks to a server instead; \
        wss:// and https:// use TLS (hosted Firebase: https://NAME.firebaseio.com). A credential \
        comes from --credentials (a service account key), RTDB_ACCESS_TOKEN (OAuth2 access token), \
        RTDB_AUTH_TOKEN (ID token, database secret) or GOOGLE_APPLICATION_CREDENTIALS; lost \
        connections are re-established and queued writes sent.

        Exit status: 0 success; 1 a command failed; 2 bad usage; 3 the database could not be \
        opened; 4 writes were not acknowledged before exit. Type 'help' in the shell for the \
        commands.

        rtdb serve runs the local server ('rtdb serve --help'); rtdb completions bash|zsh|fish \
        prints a completion script.
        """,
        shouldDisplay: false,
        helpNames: [.short, .long])

    @Option(name: .long, help: ProgramOption.argumentHelp("--data"))
    var data: String?

    @Option(name: .customShort("c"), help: ProgramOption.argumentHelp("-c"))
    var commands: [String] = []

    @Option(name: .long, help: ProgramOption.argumentHelp("--url"))
    var url: String?

    @Option(name: .long, help: ProgramOption.argumentHelp("--emulator"))
    var emulator: String?

    @Option(name: .long, help: ProgramOption.argumentHelp("--ns"))
    var ns: String?

    @Option(name: .long, help: ProgramOption.argumentHelp("--timeout"))
    var timeout: String?

    @Option(name: .long, help: ProgramOption.argumentHelp("--cacert"))
    var cacert: String?

    @Option(name: .long, help: ProgramOption.argumentHelp("--credentials"))
    var credentials: String?

    @Flag(name: .customLong("no-persistence"), help: ProgramOption.argumentHelp("--no-persistence"))
    var noPersistence = false

    @Option(name: .customLong("cache-size"), help: ProgramOption.argumentHelp("--cache-size"))
    var cacheSize: String?

    @Flag(name: .long, help: ProgramOption.argumentHelp("--keep-going"))
    var keepGoing = false

    @Flag(name: .customLong("no-color"), help: ProgramOption.argumentHelp("--no-color"))
    var noColor = false

    @Flag(name: .long, help: ProgramOption.argumentHelp("--json"))
    var json = false

    @Option(name: .long, help: ProgramOption.argumentHelp("--format"))
    var format: String?

    @Flag(name: .customLong("no-pager"), help: ProgramOption.argumentHelp("--no-pager"))
    var noPager = false

    @Flag(name: .long, help: ProgramOption.argumentHelp("--timing"))
    var timing = false

    @Flag(name: .long, help: ProgramOption.argumentHelp("--version"))
    var version = false

    @Flag(name: .long, help: ProgramOption.argumentHelp("--recover"))
    var recover = false

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("A shell command to run once, e.g. get /users --json.", valueName: "COMMAND"))
    var words: [String] = []

    /// The short usage after a usage error of the shell's own.
    /// `--emulator` with no HOST:PORT after it (the next word, if any, names no port: a
    /// command, another option) takes FIREBASE_DATABASE_EMULATOR_HOST, as firebase-admin does.
    static func resolvingBareEmulator(_ arguments: [String]) throws -> [String] {
        guard let at = arguments.firstIndex(of: "--emulator"), RTDBCommand.subcommand(named: arguments.first) == nil else { return arguments }
        let next = arguments.indices.contains(at + 1) ? arguments[at + 1] : nil
        if let next, next.contains(":"), !next.hasPrefix("-") { return arguments }
        guard let host = ProcessEnvironment.nonEmpty("FIREBASE_DATABASE_EMULATOR_HOST") else {
            throw ValidationError("--emulator without HOST:PORT takes FIREBASE_DATABASE_EMULATOR_HOST, which is not set")
        }
        var resolved = arguments
        resolved.insert(host, at: at + 1)
        return resolved
    }

    static let usageLine = "Usage: rtdb [--data DIR] [-c COMMAND ...] [--keep-going] [--json | --format FORMAT] [--no-color] [COMMAND ...]\nSee 'rtdb --help'.\n"

    func run() async throws {
        let started = DispatchTime.now().uptimeNanoseconds
        // The process's CPU time counts from here too, as the wall time does.
        if StageClock.isOn { StageClock.reset() }
        if version { return print(Version.description) }
        // ArgumentParser leaves a help flag to the pass-through argument; only the first word is one.
        if let first = words.first, ["-h", "--help", "-help"].contains(first) {
            return print(RTDBCommand.helpMessage(for: ShellCommand.self))
        }
        // A subcommand is known only as the first word: `rtdb --data DIR serve` is a mistake.
        if let first = words.first, RTDBCommand.subcommand(named: first) != nil {
            let message = "Error: options of '\(first)' go after it, as in: rtdb \(first) --help\n"
            FileHandle.standardError.write(Data(message.utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        // Options after the command belong to it; an unknown one before it is a usage error.
        if let first = words.first, first.hasPrefix("-") {
            FileHandle.standardError.write(Data("Error: Unknown option '\(first)'\n\(Self.usageLine)".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        if let format {
            let chosen = OutputFormat(rawValue: format)
            let why = chosen == nil ? "--format '\(format.prefix(40))' is not a format: use \(OutputFormat.names.joined(separator: ", "))"
                    : json && chosen != .json ? "--json is --format json: give one format" : nil
            if let why {
                FileHandle.standardError.write(Data("Error: \(why)\n\(Self.usageLine)".utf8))
                throw ExitCode(ExitStatus.usage.rawValue)
            }
        }
        var wait: TimeInterval?
        if let timeout {
            guard let seconds = DurationWord.seconds(timeout), seconds > 0 else {
                FileHandle.standardError.write(Data("Error: --timeout '\(timeout.prefix(40))' is not a duration: use 500ms, 10s, 2m (at most a day)\n\(Self.usageLine)".utf8))
                throw ExitCode(ExitStatus.usage.rawValue)
            }
            wait = seconds
        }
        var cacheLimit = 10_000_000
        if let cacheSize {
            guard let megabytes = Int(cacheSize), (1...100).contains(megabytes) else {
                FileHandle.standardError.write(Data("Error: --cache-size '\(cacheSize.prefix(40))' is not a size in MB from 1 to 100\n\(Self.usageLine)".utf8))
                throw ExitCode(ExitStatus.usage.rawValue)
            }
            cacheLimit = megabytes * 1_000_000
        }
        let folder = data.map { ($0 as NSString).expandingTildeInPath } ?? EmbeddedDatabase.defaultFolder
        if recover {
            throw ExitCode(Recover.run(folders: [folder]).rawValue)
        }
        let connection: DatabaseConnection
        var noCache: String?
        /// Another namespace of the same server, with the same credential and options (`use`).
        var openNamespace: (@Sendable (String) async throws -> DatabaseConnection)?
        do {
            if let address = try RemoteDatabase.address(url: url, emulator: emulator, namespace: ns, ambient: data == nil) {
                let credential = RemoteDatabase.Credential.fromEnvironment()
                // An explicit key first; the ambient variable only where a Google token means
                // something (not a local server), and only if no token was given.
                var keyFile = credentials.map { ($0 as NSString).expandingTildeInPath }
                if keyFile == nil, credential == nil, !RemoteDatabase.isLocal(address),
                   let ambient = ProcessEnvironment.nonEmpty("GOOGLE_APPLICATION_CREDENTIALS") {
                    keyFile = ambient
                }
                if keyFile != nil, !address.secure, !RemoteDatabase.isLocal(address) {
                    throw RemoteError("a service account's access token is sent only over TLS (wss://, https://) or to a server on this machine, not to \(address)")
                }
                let serviceAccount = try keyFile.map { (try ServiceAccount(file: $0), $0) }
                let trusted = cacert.map { ($0 as NSString).expandingTildeInPath }
                let noPersistence = self.noPersistence
                let connect: @Sendable (ServerAddress) async throws -> (RemoteDatabase, String?) = { [cacheLimit, wait] address in
                    let (cache, why) = address.socketPath != nil ? (nil, "none (a shared embedded folder is on disk already)")
                        : noPersistence ? (nil, nil) : CacheFolder.open(for: address, limit: cacheLimit)
                    let remote = try await RemoteDatabase.connect(address: address, trustedCertificates: trusted,
                                                                  credential: credential, serviceAccount: serviceAccount, cache: cache, timeout: wait ?? 10)
                    await CacheFolder.reportRestored(remote)
                    // A server that ignores g: read with a listen well before the deadline.
                    if let wait { await remote.repo.setGetFallbackDelay(min(remote.repo.getFallbackDelay, wait / 2)) }
                    return (remote, why)
                }
                (connection, noCache) = try await connect(address)
                if address.socketPath == nil {
                    openNamespace = { name in
                        var other = address
                        other.namespace = name
                        return try await connect(other).0
                    }
                }
            } else {
                connection = try await EmbeddedDatabase(folder: folder, timeout: wait ?? 10)
            }
        } catch {
            FileHandle.standardError.write(Data("rtdb: \(error)\n".utf8))
            throw ExitCode(ExitStatus.unavailable.rawValue)
        }
        let (status, last) = await runShell(connection, timeout: wait, noCache: noCache, openNamespace: openNamespace)
        await last.close()
        if StageClock.isOn {
            // For the benchmarks (RTDB_STAGE_TIMES): where this run's time went, on stderr.
            let wall = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            let mainThread = await MainActor.run { StageClock.threadCPUSeconds() }
            FileHandle.standardError.write(Data((StageClock.report(wall: wall, label: "rtdb", mainThread: mainThread) + "\n").utf8))
        }
        throw ExitCode(status.rawValue)
    }

    /// Runs the shell; returns its status and the connection in use at its end (`use` may
    /// have replaced the one it started with), for the caller to close.
    @MainActor
    private func runShell(_ connection: DatabaseConnection, timeout: TimeInterval?, noCache: String?,
                          openNamespace: (@Sendable (String) async throws -> DatabaseConnection)?) async -> (ExitStatus, DatabaseConnection) {
        let namespaces = (connection as? RemoteDatabase).flatMap { remote in
            openNamespace.map { open in
                NamespaceSwitch(current: remote, name: remote.address.namespace, open: open)
            }
        }
        let status = await runShell(connection, timeout: timeout, noCache: noCache, namespaces: namespaces)
        return (status, namespaces?.current ?? connection)
    }

    @MainActor
    private func runShell(_ connection: DatabaseConnection, timeout: TimeInterval?, noCache: String?,
                          namespaces: NamespaceSwitch?) async -> ExitStatus {
        let stdinIsTerminal = isatty(STDIN_FILENO) == 1
        let stdoutIsTerminal = isatty(STDOUT_FILENO) == 1
        let color = stdoutIsTerminal && !noColor && ProcessEnvironment.value("NO_COLOR") == nil
        var options = Shell.Options()
        options.renderer = stdoutIsTerminal ? Renderer(pretty: true, color: color) : .machine
        // Checked in run().
        options.format = format.flatMap(OutputFormat.init(rawValue:)) ?? (json ? .json : nil)
        if let timeout {
            options.readTimeout = timeout
            options.scriptWriteWait = timeout
        }
        options.timing = timing
        options.progress = isatty(STDERR_FILENO) == 1 ? .bar : .lines
        if stdoutIsTerminal { options.width = { Terminal.width } }
        options.redraws = stdoutIsTerminal
        let embedded = connection is EmbeddedDatabase
        options.location = { embedded ? "embedded database in \(connection.location)" : connection.location }
        options.credential = connection.credential
        if let noCache { options.noCache = noCache }
        options.server = connection as? ServerAdministration
        options.rulesCheck = connection as? RulesChecking
        options.snapshots = connection as? SnapshotKeeping
        options.monitor = connection as? OperationMonitoring
        options.explainer = connection as? QueryExplaining
        options.namespaces = namespaces
        let output = StandardOutput()

        if !words.isEmpty || !commands.isEmpty {
            // One-shot: rtdb get /a, or -c 'CMD' (repeatable).
            options.waitForWrites = false
            options.standardInputIsFree = !stdinIsTerminal
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
            if !noPager { options.pager = Pager.page }
            let shell = Shell(repo: connection.repo, output: output, options: options)
            return await InteractiveSession(shell: shell, location: connection.location).run()
        }
        options.waitForWrites = false
        let shell = Shell(repo: connection.repo, output: output, options: options)
        let input = StandardInputLines()
        return await BatchRunner(keepGoing: keepGoing).run({ () async throws(ScriptLineTooLong) -> String? in try await input.next() },
                                                           shell: shell) { "line \($0)" }
    }
}
