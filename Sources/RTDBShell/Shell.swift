import Foundation
import RTDBClient
import RTDBData
import RTDBProtocol

/// Runs commands against the client core and writes their results.
///
/// Interactive use waits for each write's acknowledgement so errors appear at once. Scripts
/// pipeline writes: each is sent without waiting and a rejection is reported later with the
/// line it came from; reads still see earlier writes because a connection's requests are
/// processed in order.
///
/// Commands are `async`: a command runs in the caller's task, and cancelling that task
/// (Ctrl-C, through `Interrupt.cancellable`) stops what it waits for: a read, a query, a
/// foreground watch, the acknowledgement of a write. The shell lives on the main actor; the
/// client core is an actor of its own, and the line editor has its own thread.
@MainActor
public final class Shell {
    public struct Options {
        /// Wait for each write to be acknowledged before the next command.
        public var waitForWrites = true
        /// Output for a person (pretty, coloured) unless a command says --json.
        public var renderer = Renderer.machine
        /// `rtdb --json` and `rtdb --format`: every command's output in this format, as if
        /// each line said so (a line's own --json or --format wins); nil: for a person.
        public var format: OutputFormat? = nil
        /// The output's width in columns, for `help` (asked each time: windows resize).
        public var width: @Sendable () -> Int = { 80 }
        /// Print how long each command took (`--timing`, `timing on`).
        public var timing = false
        /// How long a command may wait for the server (a read, a write at the terminal, a
        /// transaction) before it says so: `--timeout`.
        public var readTimeout: TimeInterval = 60
        /// How long the end of a script waits for its writes' acknowledgements when none
        /// comes (while they keep coming, it waits on).
        public var scriptWriteWait: TimeInterval = 30
        /// Pages a command's output when it is taller than the terminal; false when it did
        /// not (the shell prints it). Nil: no pager (not a terminal, `--no-pager`).
        public var pager: ((String) -> Bool)? = nil
        /// Asks a yes/no question on the terminal; nil when there is nobody to ask.
        public var confirm: ((String) -> Bool)? = nil
        /// Prints a line while the user may be typing (above the prompt); nil when the shell
        /// is not interactive, so there is no background.
        public var backgroundOutput: (@Sendable (String) -> Void)? = nil
        /// Whether standard output is a terminal `repeat` clears before each run.
        public var redraws = false
        /// How import and export show their progress on standard error.
        public var progress = ProgressStyle.lines
        /// Whether `import PATH -` may read standard input (commands do not come from it).
        public var standardInputIsFree = false
        /// Where the database is, for `status`: the embedded folder or the server's URL (asked each time: a shared folder changes hands).
        public var location: @Sendable () -> String = { "" }
        /// The kind of credential in use, for `status` (never the credential itself).
        public var credential = "none"
        /// What `status` says of a server's database that keeps no disk cache, and why.
        public var noCache = "off (--no-persistence)"
        /// The server's REST side (rules, the credential REST requests carry); nil for an
        /// embedded database.
        public var server: ServerAdministration? = nil
        /// The server's namespaces (`namespaces`, `use`); nil for an embedded database and a
        /// shared folder's socket, which have one.
        public var namespaces: NamespaceSwitch? = nil
        /// What answers `rules check`: the server, or the embedded database.
        public var rulesCheck: RulesChecking? = nil
        /// What keeps snapshots (`snapshot`): the embedded database, or the server.
        public var snapshots: SnapshotKeeping? = nil
        /// Whose operations `monitor` shows: the embedded database, or the server's namespace.
        public var monitor: OperationMonitoring? = nil
        /// What says how a read is answered (`--explain`): the embedded database, or the server.
        public var explainer: QueryExplaining? = nil
        public init() {}
    }

    public enum Outcome: Equatable, Sendable {
        case ok
        case failed
        case exit
    }

    /// The client core commands use; `use` moves it to another namespace.
    public private(set) var repo: Repo
    public private(set) var cwd: Path = .root
    public var options: Options
    /// Where commands write; a pageable command's output is collected for the pager.
    public private(set) var output: Output
    public private(set) var history: [String] = []

    private var backgroundWatches: [BackgroundWatch] = []
    /// `monitor --bg`s, numbered with the watches.
    var backgroundMonitors: [BackgroundMonitor] = []
    /// `pager on|off`.
    private var pagingOn = true
    var nextWatchID = 1
    /// Rejections of writes nobody waited for, reported after the line that follows them.
    let rejected = RejectedWrites()
    /// Transactions a script started while offline by choice; `online` reports them.
    var queuedTransactions: [QueuedTransaction] = []
    /// The credential chosen in this session with `auth` (a token) or `logout` (none), which
    /// `use` takes to the next namespace; nil while the one the shell started with holds.
    var chosenCredential: ChosenCredential?

    enum ChosenCredential {
        case token(String, google: Bool, description: String)
        case none
    }

    public init(repo: Repo, output: Output, options: Options = Options()) {
        self.repo = repo
        self.output = output
        self.options = options
        repo.setWriteTimeout(options.readTimeout)
        Shell.sayQueryWarnings(of: repo, output: output, options: options)
    }

    /// The server's warnings about a query it has no index for (watched or read), on standard error:
    /// above the prompt at a terminal.
    private static func sayQueryWarnings(of repo: Repo, output: Output, options: Options) {
        let say = options.backgroundOutput ?? { output.writeError($0 + "\n") }
        let color = options.renderer.color
        repo.onQueryWarning { message in say((color ? "\u{1B}[33mwarning:\u{1B}[0m " : "warning: ") + message) }
    }

    public func recordHistory(_ line: String) { history.append(line) }

    /// Takes `connection` in place of the one before (`use`): its core, where it is, whose
    /// credential; the location goes back to the root.
    func switchConnection(to connection: DatabaseConnection) {
        repo = connection.repo
        repo.setWriteTimeout(options.readTimeout)
        Shell.sayQueryWarnings(of: repo, output: output, options: options)
        options.location = { connection.location }
        options.credential = connection.credential
        options.server = connection as? ServerAdministration
        options.rulesCheck = connection as? RulesChecking
        options.snapshots = connection as? SnapshotKeeping
        options.monitor = connection as? OperationMonitoring
        options.explainer = connection as? QueryExplaining
        cwd = .root
        // Transactions queued offline belonged to the core left behind.
        queuedTransactions = []
    }

    /// Parses and runs one line. `source` names it in messages ("line 3", "-c 1").
    @discardableResult
    public func run(_ line: String, source: String? = nil, lineNumber: Int = 0) async -> Outcome {
        await run(line, source: source, lineNumber: lineNumber) { try Tokenizer.tokenize(line) }
    }

    /// Runs a command given as separate words (command-line arguments).
    public func run(arguments: [String]) async -> Outcome {
        await run(arguments.joined(separator: " "), source: nil, lineNumber: 0) { Tokenizer.tokens(fromArguments: arguments) }
    }

    private func run(_ line: String, source: String?, lineNumber: Int, tokens: () throws -> [Token]) async -> Outcome {
        let started = DispatchTime.now().uptimeNanoseconds
        // The line's own output flags reach its error messages too, even one it cannot parse.
        var errorColor = options.renderer.color
        func report(_ message: String, line: String?, column: Int?, source: String?) {
            self.report(message, line: line, column: column, source: source, color: errorColor)
        }
        do {
            let parseStarted = StageClock.begin()
            let words = try tokens()
            if words.contains(where: { $0.kind == .word && ($0.text == "--no-color" || $0.text == "--json") }) { errorColor = false }
            let command = try CommandParser.parse(tokens: words, cwd: cwd)
            StageClock.end(.shellParse, since: parseStarted)
            guard let parsed = command else { return .ok }
            let outcome: Outcome
            if let pager = options.pager, pagingOn, parsed.command.isPageable {
                // Output taller than the terminal goes through the pager, once the command ends.
                let real = output
                let paged = PagedOutput(messages: real)
                output = paged
                defer {
                    output = real
                    if !pager(paged.collected) { real.write(paged.collected) }
                }
                outcome = try await execute(parsed, source: source, lineNumber: lineNumber)
            } else {
                outcome = try await execute(parsed, source: source, lineNumber: lineNumber)
            }
            // Results that could not be written (a full disk) fail the command, with why.
            if let failure = output.takeWriteFailure() { throw ShellError(failure) }
            if options.timing, !parsed.command.isTiming {
                // As psql's \timing: on stderr, so a script's output stays data.
                let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
                output.writeError(String(format: "Time: %.3f ms\n", milliseconds))
            }
            return outcome
        } catch let error as ShellError {
            report(error.message, line: line, column: error.column, source: source)
            return .failed
        } catch is CancellationError {
            // Output that can take no more ends a command as Ctrl-C does; a failure says why.
            report(output.takeWriteFailure() ?? "interrupted", line: nil, column: nil, source: source)
            return .failed
        } catch {
            report("\(error)", line: line, column: nil, source: source)
            return .failed
        }
    }

    func report(_ message: String, line: String?, column: Int?, source: String?, color: Bool? = nil) {
        var line = line, column = column, source = source
        // A value over several lines: point into the line the column falls in.
        if let text = line, text.contains("\n"), var offset = column {
            let parts = text.split(separator: "\n", omittingEmptySubsequences: false)
            var index = 0
            while index < parts.count - 1 && offset > parts[index].unicodeScalars.count {
                offset -= parts[index].unicodeScalars.count + 1
                index += 1
            }
            line = String(parts[index])
            column = offset
            // "line 3" of a script becomes the line the error is on.
            if index > 0, let label = source, label.hasPrefix("line "), let first = Int(label.dropFirst(5)) { source = "line \(first + index)" }
        }
        var text = ""
        if let source { text += source }
        if let column, source != nil { text += ", column \(column + 1)" }
        text = text.isEmpty ? message : "\(text): \(message)"
        var renderer = options.renderer
        if let color { renderer.color = color }
        var out = renderer.error(text)
        if let line, let column, !line.isEmpty {
            let (shown, caret) = Shell.excerpt(of: line, at: column)
            out += "  \(shown)\n  " + String(repeating: " ", count: caret) + "^\n"
        }
        output.writeError(out)
    }

    /// At most `width` characters of a line around `column` (a count of Unicode scalars),
    /// with … where it was cut, and where the caret goes under it: an error in a line of a
    /// gigabyte quotes a line's worth, not all of it.
    static func excerpt(of line: String, at column: Int, width: Int = 100) -> (String, Int) {
        let scalars = line.unicodeScalars
        let count = scalars.count
        let column = min(max(0, column), count)
        guard count > width else { return (line, column) }
        let start = max(0, min(column - width / 2, count - width))
        let from = scalars.index(scalars.startIndex, offsetBy: start)
        let to = scalars.index(from, offsetBy: width)
        var shown = String(scalars[from..<to])
        var caret = column - start
        if start > 0 {
            shown = "…" + shown
            caret += 1
        }
        if start + width < count { shown += "…" }
        return (shown, caret)
    }

    // MARK: Commands

    func execute(_ parsed: ParsedLine, source: String?, lineNumber: Int) async throws -> Outcome {
        // Output flags of this line, or of the program (for every line).
        let format = parsed.format ?? options.format
        guard let format, format.isDerived, parsed.command.printsFormattedData else {
            return try await perform(parsed, format: format, source: source, lineNumber: lineNumber)
        }
        // A derived format is made from the JSON the command prints.
        let stream = parsed.command.streams
        if let stream {
            if stream.background && format != .ndjson {
                throw ShellError("--format \(format) is not for a background \(stream.name): its lines come above the prompt one at a time; use ndjson or json")
            }
            if format == .table {
                throw ShellError("--format table needs a result that ends, to align its columns; \(stream.name) prints until stopped: use csv, tsv or ndjson")
            }
            // ndjson is the stream's own JSON lines.
            if format == .ndjson { return try await perform(parsed, format: format, source: source, lineNumber: lineNumber) }
        }
        let real = output
        let formatted = FormattedOutput(format, to: real, columns: stream?.columns, width: options.renderer.pretty ? options.width() : nil,
                                        color: options.renderer.color && !parsed.noColor)
        output = formatted
        defer {
            output = real
            formatted.finish()
        }
        return try await perform(parsed, format: format, source: source, lineNumber: lineNumber)
    }

    private func perform(_ parsed: ParsedLine, format: OutputFormat?, source: String?, lineNumber: Int) async throws -> Outcome {
        let json = format != nil
        var renderer = json ? Renderer.machine : options.renderer
        if parsed.noColor { renderer.color = false }
        switch parsed.command {
        case .explain(let query):
            try await explain(query, json: json)
        case let .get(query, shallow, export):
            let value = try await read(query)
            if format?.isDerived == true {
                output.write(renderer.rows(value, index: query.params.isDefault ? .key : query.params.index, shallow: shallow, export: export))
                return .ok
            }
            // A query's children come in its order; a location's value as JSON has it.
            output.write(query.params.isDefault ? renderer.value(shallow ? value.shallow : value, export: export)
                                                : renderer.orderedObject(value, index: query.params.index, shallow: shallow, export: export))
        case let .ls(path, long):
            let value = try await read(path)
            if value.isLeaf {
                throw ShellError("\(path) is a value, not a list: \(JSONWriter.string(value).prefix(60))")
            }
            output.write(renderer.keys(value, long: long))
        case .edit(let path):
            return try await runEdit(path)
        case let .tree(path, depth):
            let value = try await read(path)
            output.write(json ? JSONWriter.string(Outline.treeJSON(value, depth: depth)) + "\n"
                              : Outline.tree(value, at: path, depth: depth, width: options.width()))
        case let .du(path, depth):
            let sizes = Outline.sizes(try await read(path), at: path, depth: depth)
            if json {
                let list = sizes.map { JSONValue.object([("path", .string($0.path.description)), ("bytes", .number(Double($0.bytes)))]) }
                output.write(JSONValue.array(list).serialized() + "\n")
            } else {
                let column = sizes.map { Outline.humanBytes($0.bytes).count }.max() ?? 0
                for size in sizes {
                    output.write(Outline.humanBytes(size.bytes).leftPadded(to: column, with: " ") + "  " + size.path.description + "\n")
                }
            }
        case let .importFile(path, file, merge, chunk, quiet):
            return try await runImport(path, file: file, merge: merge, chunk: chunk, quiet: quiet, json: json)
        case let .export(path, file, priorities, quiet):
            return try await runExport(path, file: file, priorities: priorities, quiet: quiet)
        case .cd(let path):
            cwd = path
        case .pwd:
            output.write(json ? JSONWriter.string(Node(.string(cwd.description))) + "\n" : cwd.description + "\n")
        case let .set(path, value):
            try await finish(repo.set(path, value), at: path, source: source, line: lineNumber)
        case let .update(path, updates):
            try await finish(repo.update(path, updates), at: path, source: source, line: lineNumber)
        case let .push(path, value):
            let write = try await repo.push(path, value ?? .empty)
            try await finish(write, at: path.child(write.key ?? ""), source: source, line: lineNumber)
            let key = write.key ?? ""
            output.write(json ? JSONWriter.string(Node(.string(key))) + "\n" : key + "\n")
        case let .remove(path, force):
            if !force, try await !confirmRemoval(path) { return .failed }
            try await finish(repo.set(path, .empty), at: path, source: source, line: lineNumber)
        case .copy(let request):
            try await runCopy(request, source: source, lineNumber: lineNumber)
        case let .priority(path, priority):
            try await finish(repo.setPriority(path, priority), at: path, source: source, line: lineNumber)
        case let .query(query, watch, events, background):
            if watch { return try await runWatch(query, events: events, background: background, json: json, renderer: renderer) }
            let value = try await read(query)
            output.write(format?.isDerived == true ? renderer.rows(value, index: query.params.index, shallow: false, export: false)
                                                   : renderer.queryResult(value, index: query.params.index))
        case let .watch(query, events, background):
            return try await runWatch(query, events: events, background: background, json: json, renderer: renderer)
        case .watches where json:
            let list = backgroundWatches.map { watch -> JSONValue in
                .object([("id", .number(Double(watch.id))), ("path", .string(watch.query.path.description)),
                         ("query", watch.query.params.isDefault ? .null : .string(watch.query.identifier)),
                         ("events", .array(watch.events.map(\.rawValue).sorted().map(JSONValue.string))),
                         ("seen", .number(Double(watch.eventCount)))])
            }
            let monitors = backgroundMonitors.map { monitor -> JSONValue in
                .object([("id", .number(Double(monitor.id))), ("path", .string(monitor.path.description)), ("monitor", .bool(true)),
                         ("seen", .number(Double(monitor.operationCount)))])
            }
            output.write(JSONValue.array(list + monitors).serialized() + "\n")
        case .watches:
            if backgroundWatches.isEmpty && backgroundMonitors.isEmpty { output.write("no background watches\n") }
            for watch in backgroundWatches {
                let query = watch.query.params.isDefault ? "" : " \(watch.query.identifier)"
                let events = watch.events.count == EventType.allCases.count ? "all events" : watch.events.map(\.rawValue).sorted().joined(separator: ",")
                output.write("\(watch.id)  \(watch.query.path)\(query)  \(events)  \(watch.eventCount) seen\n")
            }
            for monitor in backgroundMonitors {
                output.write("\(monitor.id)  \(monitor.path)  monitor  \(monitor.operationCount) seen\n")
            }
        case .unwatch(let id):
            let stopping = backgroundWatches.filter { id == nil || $0.id == id }
            let monitors = backgroundMonitors.filter { id == nil || $0.id == id }
            if let id, stopping.isEmpty && monitors.isEmpty { throw ShellError("no background watch \(id): see 'watches'") }
            for monitor in monitors { monitor.task.cancel() }
            backgroundMonitors.removeAll { m in monitors.contains { $0 === m } }
            // A script's writes before it are not awaited one by one: their events may still
            // be on the way (a query's window moves when the server answers, before its ack).
            if !options.waitForWrites, repo.pendingWriteCount > 0, await repo.isConnected {
                _ = await repo.waitForPendingWrites(idle: options.scriptWriteWait)
            }
            for watch in stopping { await repo.unlisten(watch.query, watch.registration) }
            backgroundWatches.removeAll { w in stopping.contains { $0 === w } }
        case let .tx(path, change, verbose):
            return try await runTransaction(path, change, verbose: verbose, renderer: renderer, json: json,
                                            source: source, lineNumber: lineNumber)
        case .onDisconnect(let action):
            try await onDisconnect(action, json: json)
        case .online:
            await repo.goOnline()
            if try await !repo.connected(within: 5) {
                output.writeError("online: not connected yet (the server does not answer); queued writes are sent when it does\n")
            }
            return try await reportQueuedTransactions()
        case .offline:
            await repo.goOffline()
            output.writeError("offline: writes queue until 'online'\n")
        case let .keepSynced(path, on):
            if let path {
                do { try await repo.keepSynced(path, on) } catch let error as DatabaseError { throw ShellError(error) }
            } else {
                let paths = await repo.keptSyncedPaths
                if json {
                    output.write(JSONValue.array(paths.map { .string($0.description) }).serialized() + "\n")
                } else {
                    output.write(paths.isEmpty ? "no kept-synced paths\n" : paths.map { "\($0)\n" }.joined())
                }
            }
        case .status:
            await printStatus(json: json)
        case .pending:
            await listPending(json: json)
        case .purgeWrites(let force):
            return try await purgeWrites(force: force)
        case .cache(let clear):
            try await showCache(clear: clear, json: json)
        case .auth(let source):
            try await authenticate(source)
        case .logout:
            try await logout()
        case .rules(let file):
            try await rules(file)
        case .rulesCheck(let check):
            return try await checkRules(check, json: json, renderer: renderer)
        case .rulesCoverage:
            try await showRuleCoverage(json: json)
        case .snapshot(let action):
            try await snapshot(action, json: json)
        case let .monitor(path, background):
            return try await monitor(path, background: background, json: json, renderer: renderer)
        case .profile(let request):
            try await profile(request, json: json)
        case .namespaces:
            try await listNamespaces(json: json)
        case .use(let name):
            return try await use(name)
        case .pager(let on):
            guard options.pager != nil else { throw ShellError("there is no pager here: output is not a terminal, or --no-pager was given") }
            pagingOn = on ?? !pagingOn
            output.writeError("the pager is \(pagingOn ? "on" : "off")\n")
        case .timing(let on):
            options.timing = on ?? !options.timing
            output.writeError("timing is \(options.timing ? "on" : "off")\n")
        case .sleep(let seconds):
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
        case .repeating(let request):
            return try await runRepeat(request, source: source, lineNumber: lineNumber)
        case .help(let topic):
            let width = options.width()
            output.write(topic.map { Help.command($0, width: width) } ?? Help.overview(width: width))
        case .history:
            let width = String(history.count).count
            for (i, line) in history.enumerated() {
                output.write(String(i + 1).leftPadded(to: width, with: " ") + "  " + line + "\n")
            }
        case .exit:
            return .exit
        }
        return .ok
    }

    // MARK: onDisconnect, status

    private func onDisconnect(_ action: OnDisconnectAction?, json: Bool) async throws {
        do {
            switch action {
            case let .set(path, value): try await repo.onDisconnectSet(path, value)
            case let .update(path, updates): try await repo.onDisconnectUpdate(path, updates)
            case let .cancel(path): try await repo.onDisconnectCancel(path)
            case nil:
                let writes = await repo.onDisconnectWrites.writes
                if json {
                    output.write(JSONValue.array(writes.map(Shell.json)).serialized() + "\n")
                } else if writes.isEmpty {
                    output.write("no onDisconnect writes on this connection\n")
                } else {
                    for write in writes {
                        switch write {
                        case let .set(path, value):
                            output.write(value.isEmpty ? "\(path)  remove\n" : "\(path)  set \(JSONWriter.string(value))\n")
                        case let .update(path, updates, _):
                            output.write("\(path)  update \(JSONWriter.string(Shell.updateObject(updates)))\n")
                        }
                    }
                }
            }
        } catch let error as DatabaseError {
            throw ShellError(error)
        }
    }

    private static func json(_ write: Write) -> JSONValue {
        switch write {
        case let .set(path, value):
            return .object([("path", .string(path.description)), value.isEmpty ? ("remove", .bool(true)) : ("set", Shell.jsonValue(value))])
        case let .update(path, updates, _):
            return .object([("path", .string(path.description)), ("update", Shell.jsonValue(updateObject(updates)))])
        }
    }

    /// An update as the object it was typed as: relative paths to values.
    static func updateObject(_ updates: [UpdateEntry]) -> Node {
        var children: [(ChildKey, Node)] = []
        for update in updates { children.append((ChildKey(update.path.wireString), update.value)) }
        return Node(children: ChildMap(unsorted: children))
    }

    /// `export`: priorities kept, as the export form writes them.
    static func jsonValue(_ node: Node, export: Bool = false) -> JSONValue {
        (try? JSONValue.parse(JSONWriter.string(node, options: JSONWriter.Options(export: export)))) ?? .null
    }

    private func printStatus(json: Bool) async {
        let connected = await repo.isConnected
        let byChoice = await repo.isOfflineByChoice
        let offset = await repo.serverTimeOffset
        let transactions = await repo.pendingTransactionCount
        let writes = max(0, repo.pendingWriteCount - transactions)
        let kept = await repo.keptSyncedPaths
        let onDisconnect = await repo.onDisconnectWrites.writes.count
        let cache = await repo.cacheSummary
        let cacheText = cache.map(Self.cacheLine) ?? (options.server == nil ? "none (an embedded database is on disk already)" : options.noCache)
        let state = connected ? "online" : byChoice ? "offline (by 'offline'; 'online' connects again)" : "offline (reconnecting)"
        if json {
            let object: JSONValue = .object([
                ("location", .string(options.location())), ("online", .bool(connected)), ("offlineByChoice", .bool(byChoice)),
                ("serverTimeOffset", .number(offset.rounded())), ("credential", .string(options.credential)),
                ("pendingWrites", .number(Double(writes))), ("pendingTransactions", .number(Double(transactions))),
                ("backgroundWatches", .array((backgroundWatches.map(\.id) + backgroundMonitors.map(\.id)).sorted().map { .number(Double($0)) })),
                ("keptSynced", .array(kept.map { .string($0.description) })), ("onDisconnectWrites", .number(Double(onDisconnect))),
                ("cache", cache.map(Self.cacheObject) ?? .null),
            ])
            output.write(object.serialized() + "\n")
            return
        }
        func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
        let rows: [(String, String)] = [
            ("database", options.location()),
            ("state", state),
            ("server clock", "\(Int(offset.rounded())) ms from this one"),
            ("credential", options.credential),
            ("pending", "\(plural(writes, "write")), \(plural(transactions, "transaction"))"),
            ("cache", cacheText),
            ("watches", backgroundWatches.isEmpty && backgroundMonitors.isEmpty ? "none in the background"
                : (backgroundWatches.map { "\($0.id) \($0.query.path)" } + backgroundMonitors.map { "\($0.id) monitor \($0.path)" }).joined(separator: ", ")),
            ("keepsynced", kept.isEmpty ? "none" : kept.map(\.description).joined(separator: ", ")),
            ("ondisconnect", plural(onDisconnect, "write")),
        ]
        for (name, value) in rows { output.write(name.padding(toLength: 14, withPad: " ", startingAt: 0) + value + "\n") }
    }

    /// A watch in the foreground (until the task is cancelled: Ctrl-C) or, on the terminal,
    /// in the background.
    private func runWatch(_ query: QuerySpec, events: Set<EventType>, background: Bool, json: Bool,
                          renderer: Renderer) async throws -> Outcome {
        let formatter = EventFormatter(json: json || !renderer.pretty, color: renderer.color && !json)
        if background {
            // At the terminal, above the prompt; in a script, as lines of its output.
            let output = self.output
            let print = options.backgroundOutput ?? { output.write($0 + "\n") }
            let warn = options.backgroundOutput ?? { output.writeError($0 + "\n") }
            let machine = json || !renderer.pretty
            let id = nextWatchID
            nextWatchID += 1
            let seen = BackgroundWatch.Counter()
            let registration = EventRegistration(types: events, callback: { event in
                seen.count()
                print(formatter.line(event, watchID: id))
            }, cancel: { error in warn("[\(id)] watch cancelled: \(Shell.refusal(error, at: query.path))") })
            backgroundWatches.append(BackgroundWatch(id: id, query: query, events: events, registration: registration, seen: seen))
            output.write(machine ? "{\"watch\":\(id)}\n" : "watch \(id) started on \(query.path); 'unwatch \(id)' stops it\n")
            await repo.listen(query, registration)
            // Its first events (the data there now) come before what follows.
            do {
                let primed = try await primeCache(query)
                await repo.unlisten(primed.0, primed.1)
            } catch {
                // Interrupted or refused: no watch is left behind.
                await repo.unlisten(query, registration)
                backgroundWatches.removeAll { $0.id == id }
                throw error
            }
            return .ok
        }
        do {
            for try await event in await repo.events(query, types: events) {
                output.write(formatter.line(event) + "\n")
            }
        } catch let error as DatabaseError {
            throw ShellError("the watch was cancelled: \(Shell.refusal(error, at: query.path))")
        }
        // The stream ends when this task is cancelled: the watch's normal end.
        return .ok
    }

    /// This session's writes come before a command after them that the database answers
    /// itself, not this session's cache: a snapshot's save holds them, a restore replaces
    /// them, an explained read reads them.
    func writesAcknowledged(before done: String) async throws {
        if !queuedTransactions.isEmpty {
            let count = queuedTransactions.count
            throw ShellError("\(count) transaction\(count == 1 ? " is" : "s are") queued until 'online', so nothing was \(done)")
        }
        let left = await repo.waitForPendingWrites(idle: options.scriptWriteWait)
        guard left > 0 else { return }
        throw ShellError("\(left) write\(left == 1 ? " is" : "s are") not acknowledged yet, so nothing was \(done): 'pending' lists them")
    }

    func read(_ path: Path) async throws -> Node {
        try await read(QuerySpec(path: path))
    }

    /// What the server answers for `query` (offline, what the client holds complete for it),
    /// its refusal and its silence past `readTimeout`, as the shell reports them.
    /// `keepInDiskCache: false`: the data goes elsewhere (an export's pages).
    func read(_ query: QuerySpec, keepInDiskCache: Bool = true) async throws -> Node {
        let repo = self.repo
        do {
            return try await withTimeout(options.readTimeout) { try await repo.get(query, keepInDiskCache: keepInDiskCache) }
        } catch is TimeoutError {
            throw ShellError("the server did not answer within \(DurationWord.describe(options.readTimeout))")
        } catch let error as DatabaseError {
            throw ShellError(error)
        }
    }

    /// Interactive: waits for the acknowledgement. A script goes on; a rejection is
    /// reported later with the line the write came from.
    func finish(_ write: PendingWrite, at path: Path, source: String?, line: Int) async throws {
        // A background watch prints what this write raises before the next output.
        if !backgroundWatches.isEmpty { await repo.waitForQueuedEvents() }
        guard options.waitForWrites else {
            let rejected = self.rejected
            write.whenAnswered { result in
                // Dropped by purge-writes: as asked, not a refusal.
                if case .failure(let error) = result, error.code != "WRITE_CANCELED" {
                    rejected.add(line: line, source: source ?? "", error: Shell.refusal(error, at: path))
                }
            }
            return
        }
        if await repo.cacheSummary != nil, await !repo.isConnected {
            // Kept on disk before it is reported: a later session sends it if this one cannot.
            guard await repo.commitCacheNow() else {
                let why = await repo.cacheSummary?.failure ?? "unknown error"
                throw ShellError("the write is applied locally, but the disk cache could not keep it (\(why)): it is lost if this shell exits before the server answers")
            }
            let when = await repo.isOfflineByChoice ? "after 'online'" : "when the connection returns"
            output.writeError("offline: the write is applied locally and queued in the cache; it is sent \(when)\n")
            let late = options.backgroundOutput
            write.whenAnswered { outcome in
                if case .failure(let error) = outcome, error.code != "DISCONNECTED", error.code != "WRITE_CANCELED" {
                    late?("a queued write was rejected: \(Shell.refusal(error, at: path))")
                }
            }
            return
        }
        if await repo.isOfflineByChoice {
            // Waiting would wait for the 'online' the user has yet to type.
            output.writeError("offline: the write is applied locally and queued until 'online'\n")
            let late = options.backgroundOutput
            write.whenAnswered { outcome in
                if case .failure(let error) = outcome { late?("a queued write was rejected: \(Shell.refusal(error, at: path))") }
            }
            return
        }
        do {
            do {
                try await withTimeout(min(0.5, options.readTimeout)) { try await write.acknowledged() }
                return
            } catch is TimeoutError {}
            if await !repo.isConnected {
                output.writeError("offline: the write is applied locally and will be sent when the connection returns (Ctrl-C stops waiting)\n")
            }
            try await withTimeout(max(0, options.readTimeout - 0.5)) { try await write.acknowledged() }
        } catch let error as DatabaseError {
            throw ShellError(Shell.refusal(error, at: path))
        } catch is CancellationError {
            // Ctrl-C stops the waiting; the write stays queued and its outcome is printed when it comes.
            printWhenAnswered(write)
            throw ShellError("not acknowledged yet: the write stays queued and is sent when the connection returns")
        } catch is TimeoutError {
            printWhenAnswered(write)
            throw ShellError("not acknowledged within \(DurationWord.describe(options.readTimeout)): the write stays queued and is sent when the server answers")
        }
    }

    /// At the terminal: the outcome of a write nobody waits for any more, when it comes.
    private func printWhenAnswered(_ write: PendingWrite) {
        let late = options.backgroundOutput
        write.whenAnswered { outcome in
            switch outcome {
            case .success: late?("a queued write was acknowledged by the server")
            case .failure(let error): late?("a queued write was rejected: \(error)")
            }
        }
    }

    /// Stops every background watch (a script's end). The core delivers events in order, so
    /// those raised before this call have been printed when it returns.
    public func stopBackgroundWatches() async {
        for watch in backgroundWatches { await repo.unlisten(watch.query, watch.registration) }
        backgroundWatches.removeAll()
        for monitor in backgroundMonitors { monitor.task.cancel() }
        backgroundMonitors.removeAll()
    }

    /// A write's refusal, naming where it wrote when the rules refused it (hosted Firebase
    /// says only "Permission denied").
    nonisolated static func refusal(_ error: DatabaseError, at path: Path) -> DatabaseError {
        guard error.code == "PERMISSION_DENIED" else { return error }
        return DatabaseError(code: "PERMISSION_DENIED at \(path)", message: error.message)
    }

    /// Reports writes the server rejected since the last call; returns how many.
    public func reportRejectedWrites() -> Int {
        let failures = rejected.take()
        for failure in failures {
            report("write rejected: \(failure.error)", line: nil, column: nil, source: failure.source.isEmpty ? nil : failure.source)
        }
        return failures.count
    }

    /// Waits for every write to be acknowledged; says so if some never were (within
    /// `timeout`, or before the task was cancelled). Returns false when writes remain
    /// unacknowledged.
    public func finishWrites(timeout: TimeInterval? = nil) async -> Bool {
        let timeout = timeout ?? options.scriptWriteWait
        if await repo.cacheSummary != nil, await !repo.isConnected {
            return await keepQueuedWrites(unanswered: nil)
        }
        if await repo.isOfflineByChoice {
            // Nothing will be sent: saying so now beats waiting.
            let left = repo.pendingWriteCount
            guard left > 0 else { return true }
            output.writeError(options.renderer.error("\(left) write\(left == 1 ? " was" : "s were") never sent: the connection is offline by 'offline' ('online' sends what is queued); \(left == 1 ? "it is" : "they are") lost"))
            return false
        }
        let left = await repo.waitForPendingWrites(idle: timeout)
        guard left > 0 else { return true }
        // Only a server that stopped answering is waited out: one still acknowledging (an
        // engine writing a large script) is waited for however long it takes.
        let why = Task.isCancelled ? "before the wait was interrupted" : "after \(DurationWord.describe(timeout)) in which it acknowledged none"
        if await repo.cacheSummary != nil { return await keepQueuedWrites(unanswered: why) }
        output.writeError(options.renderer.error("\(left) write\(left == 1 ? " was" : "s were") not acknowledged by the server \(why) and may be lost"))
        return false
    }

    /// At exit with a disk cache and writes unanswered (offline, or `unanswered` says why the
    /// server did not answer): they stay queued there for the next session; transactions are
    /// not kept. False when the server did not answer or transactions are lost.
    private func keepQueuedWrites(unanswered why: String?) async -> Bool {
        let kept = await repo.commitCacheNow()
        let writes = await repo.pendingUserWrites.count
        if !kept {
            let failure = await repo.cacheSummary?.failure ?? "unknown error"
            output.writeError(options.renderer.error("\(writes) write\(writes == 1 ? " was" : "s were") not acknowledged, and the disk cache could not keep them (\(failure)): they may be lost"))
            return false
        }
        let transactions = await repo.pendingTransactionCount
        func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
        let next = "will be sent the next time rtdb connects to this database"
        if let why, writes > 0 {
            let stays = writes == 1 ? "it stays" : "they stay"
            output.writeError(options.renderer.error("\(plural(writes, "write")) \(writes == 1 ? "was" : "were") not acknowledged by the server \(why); \(stays) queued in the cache and \(next)"))
        } else if writes > 0 {
            output.writeError("offline: \(plural(writes, "write")) stay\(writes == 1 ? "s" : "") queued in the cache and \(next) ('pending' lists them)\n")
        }
        guard transactions == 0 else {
            output.writeError(options.renderer.error("\(plural(transactions, "transaction")) never reached the server and \(transactions == 1 ? "is" : "are") lost: transactions are not kept across restarts"))
            return false
        }
        return why == nil
    }

    private func confirmRemoval(_ path: Path) async throws -> Bool {
        if path.isRoot && options.confirm == nil {
            throw ShellError("removing / deletes the whole database: add --force to do it from a script")
        }
        guard let confirm = options.confirm else { return true }
        let value = try await read(path)
        let leaves = value.leafCount
        guard path.isRoot || leaves > 100 else { return true }
        if value.isEmpty { return true }
        let what = path.isRoot ? "the whole database (\(leaves) values)" : "\(path) (\(leaves) values)"
        if confirm("remove \(what)? [y/N] ") { return true }
        output.writeError("not removed\n")
        return false
    }
}
