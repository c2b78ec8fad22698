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
public final class Shell {
    public struct Options {
        /// Wait for each write to be acknowledged before the next command.
        public var waitForWrites = true
        /// Output for a person (pretty, coloured) unless a command says --json.
        public var renderer = Renderer.machine
        /// Asks a yes/no question on the terminal; nil when there is nobody to ask.
        public var confirm: ((String) -> Bool)? = nil
        /// Prints a line while the user may be typing (above the prompt); nil when the shell
        /// is not interactive, so there is no background.
        public var backgroundOutput: ((String) -> Void)? = nil
        /// Blocks until the user interrupts (Ctrl-C) or output is gone; false on timeout.
        public var waitForInterrupt: (TimeInterval?) -> Bool = { Interrupt.wait(timeout: $0) }
        public init() {}
    }

    public enum Outcome: Equatable {
        case ok
        case failed
        case exit
    }

    public let repo: Repo
    public private(set) var cwd: Path = .root
    public var options: Options
    public let output: Output
    public private(set) var history: [String] = []
    /// How long a read may wait for the server.
    public var readTimeout: TimeInterval = 60

    private var backgroundWatches: [BackgroundWatch] = []
    private var nextWatchID = 1

    private let failuresLock = NSLock()
    private var asyncFailures: [(line: Int, source: String, error: DatabaseError)] = []

    public init(repo: Repo, output: Output, options: Options = Options()) {
        self.repo = repo
        self.output = output
        self.options = options
    }

    public func recordHistory(_ line: String) { history.append(line) }

    /// Parses and runs one line. `source` names it in messages ("line 3", "-c 1").
    @discardableResult
    public func run(_ line: String, source: String? = nil, lineNumber: Int = 0) -> Outcome {
        run(line, source: source, lineNumber: lineNumber) { try Tokenizer.tokenize(line) }
    }

    /// Runs a command given as separate words (command-line arguments).
    public func run(arguments: [String]) -> Outcome {
        run(arguments.joined(separator: " "), source: nil, lineNumber: 0) { Tokenizer.tokens(fromArguments: arguments) }
    }

    private func run(_ line: String, source: String?, lineNumber: Int, tokens: () throws -> [Token]) -> Outcome {
        do {
            guard let parsed = try CommandParser.parse(tokens: tokens(), cwd: cwd) else { return .ok }
            return try execute(parsed, source: source, lineNumber: lineNumber)
        } catch let error as ShellError {
            report(error.message, line: line, column: error.column, source: source)
            return .failed
        } catch {
            report("\(error)", line: line, column: nil, source: source)
            return .failed
        }
    }

    func report(_ message: String, line: String?, column: Int?, source: String?) {
        var text = ""
        if let source { text += source }
        if let column, source != nil { text += ", column \(column + 1)" }
        text = text.isEmpty ? message : "\(text): \(message)"
        var out = options.renderer.error(text)
        if let line, let column, !line.isEmpty {
            out += "  \(line)\n  " + String(repeating: " ", count: min(column, line.count)) + "^\n"
        }
        output.writeError(out)
    }

    // MARK: Commands

    func execute(_ parsed: ParsedLine, source: String?, lineNumber: Int) throws -> Outcome {
        let renderer = parsed.json ? Renderer.machine : options.renderer
        switch parsed.command {
        case let .get(path, shallow, export):
            let value = try read(path)
            output.write(renderer.value(shallow ? value.shallow : value, export: export))
        case let .ls(path, long):
            let value = try read(path)
            if value.isLeaf {
                throw ShellError("\(path) is a value, not a list: \(JSONWriter.string(value).prefix(60))")
            }
            output.write(renderer.keys(value, long: long))
        case .cd(let path):
            cwd = path
        case .pwd:
            output.write(parsed.json ? JSONWriter.string(Node(.string(cwd.description))) + "\n" : cwd.description + "\n")
        case let .set(path, value):
            try write(source: source, line: lineNumber) { repo.set(path, value, completion: $0) }
        case let .update(path, updates):
            try write(source: source, line: lineNumber) { repo.update(path, updates, completion: $0) }
        case let .push(path, value):
            var key = ""
            try write(source: source, line: lineNumber) { key = repo.push(path, value ?? .empty, completion: $0) }
            output.write(parsed.json ? JSONWriter.string(Node(.string(key))) + "\n" : key + "\n")
        case let .remove(path, force):
            if !force, try !confirmRemoval(path) { return .failed }
            try write(source: source, line: lineNumber) { repo.set(path, .empty, completion: $0) }
        case let .priority(path, priority):
            try write(source: source, line: lineNumber) { repo.setPriority(path, priority, completion: $0) }
        case let .query(query, watch, events, background):
            if watch { return try runWatch(query, events: events, background: background, json: parsed.json) }
            let value = try readQuery(query)
            output.write(renderer.queryResult(value, index: query.params.index))
        case let .watch(query, events, background):
            return try runWatch(query, events: events, background: background, json: parsed.json)
        case .watches:
            if backgroundWatches.isEmpty { output.write(parsed.json ? "[]\n" : "no background watches\n") }
            for watch in backgroundWatches {
                let query = watch.query.params.isDefault ? "" : " \(watch.query.identifier)"
                let events = watch.events.count == EventType.allCases.count ? "all events" : watch.events.map(\.rawValue).sorted().joined(separator: ",")
                output.write("\(watch.id)  \(watch.query.path)\(query)  \(events)  \(watch.eventCount) seen\n")
            }
        case .unwatch(let id):
            let stopping = backgroundWatches.filter { id == nil || $0.id == id }
            if let id, stopping.isEmpty { throw ShellError("no background watch \(id): see 'watches'") }
            for watch in stopping { repo.unlisten(watch.query, watch.registration) }
            backgroundWatches.removeAll { w in stopping.contains { $0 === w } }
        case .help(let topic):
            output.write(topic.map(Help.command) ?? Help.overview())
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

    /// Runs a query once: listens until the server has answered, then stops.
    private func readQuery(_ query: QuerySpec) throws -> Node {
        let semaphore = DispatchSemaphore(value: 0)
        let lock = NSLock()
        var result: Node?
        var failure: DatabaseError?
        let registration = EventRegistration(types: [.value], callback: { event in
            lock.lock()
            if result == nil { result = event.node; semaphore.signal() }
            lock.unlock()
        }, cancel: { error in
            lock.lock(); failure = error; lock.unlock()
            semaphore.signal()
        })
        repo.listen(query, registration)
        defer { repo.unlisten(query, registration) }
        // Offline, data this client does not hold cannot come: say so as a read does.
        let offlineWait = min(readTimeout, repo.offlineReadTimeout)
        if semaphore.wait(timeout: .now() + offlineWait) == .timedOut {
            if !repo.isConnected { throw ShellError("\(DatabaseError.offline)") }
            if semaphore.wait(timeout: .now() + readTimeout - offlineWait) == .timedOut {
                throw ShellError("the server did not answer within \(Int(readTimeout)) seconds")
            }
        }
        lock.lock(); defer { lock.unlock() }
        if let failure { throw ShellError("\(failure)") }
        return result ?? .empty
    }

    /// A watch in the foreground (until Ctrl-C) or, on the terminal, in the background.
    private func runWatch(_ query: QuerySpec, events: Set<EventType>, background: Bool, json: Bool) throws -> Outcome {
        let formatter = EventFormatter(json: json || !options.renderer.pretty, color: options.renderer.color && !json)
        if background {
            guard let print = options.backgroundOutput else {
                throw ShellError("background watches need the interactive shell; run watch without --bg here")
            }
            let id = nextWatchID
            nextWatchID += 1
            var watch: BackgroundWatch?
            let registration = EventRegistration(types: events, callback: { event in
                watch?.count()
                print(formatter.line(event, watchID: id))
            }, cancel: { error in print("[\(id)] watch cancelled: \(error)") })
            watch = BackgroundWatch(id: id, query: query, events: events, registration: registration)
            backgroundWatches.append(watch!)
            output.write(json ? "{\"watch\":\(id)}\n" : "watch \(id) started on \(query.path); 'unwatch \(id)' stops it\n")
            repo.listen(query, registration)
            return .ok
        }
        let output = self.output
        let lock = NSLock()
        var cancelled: DatabaseError?
        let registration = EventRegistration(types: events, callback: { event in
            lock.lock(); defer { lock.unlock() }
            output.write(formatter.line(event) + "\n")
        }, cancel: { error in
            lock.lock(); cancelled = error; lock.unlock()
            Interrupt.raise()
        })
        repo.listen(query, registration)
        _ = options.waitForInterrupt(nil)
        repo.unlisten(query, registration)
        repo.flushEvents()  // let events already on their way finish printing
        lock.lock(); defer { lock.unlock() }
        if let cancelled { throw ShellError("the watch was cancelled: \(cancelled)") }
        return .ok
    }

    private func read(_ path: Path) throws -> Node {
        let semaphore = DispatchSemaphore(value: 0)
        var result: Result<Node, DatabaseError>?
        repo.get(path) { result = $0; semaphore.signal() }
        if semaphore.wait(timeout: .now() + readTimeout) == .timedOut {
            throw ShellError("the server did not answer within \(Int(readTimeout)) seconds")
        }
        switch result! {
        case .success(let node): return node
        case .failure(let error): throw ShellError("\(error)")
        }
    }

    private func write(source: String?, line: Int, _ start: (@escaping (Result<Void, DatabaseError>) -> Void) -> Void) throws {
        if options.waitForWrites {
            try writeAndWait(start)
        } else {
            start { [weak self] result in
                guard case .failure(let error) = result, let self else { return }
                self.failuresLock.lock()
                self.asyncFailures.append((line, source ?? "", error))
                self.failuresLock.unlock()
            }
        }
    }

    /// Waits for the acknowledgement. Offline, the write waits for the connection; Ctrl-C
    /// stops waiting (the write stays queued, and its outcome is printed when it comes).
    private func writeAndWait(_ start: (@escaping (Result<Void, DatabaseError>) -> Void) -> Void) throws {
        let semaphore = DispatchSemaphore(value: 0)
        let lock = NSLock()
        var result: Result<Void, DatabaseError>?
        var abandoned = false
        let late = options.backgroundOutput
        start { outcome in
            lock.lock()
            result = outcome
            let nobodyWaits = abandoned
            lock.unlock()
            semaphore.signal()
            guard nobodyWaits else { return }
            switch outcome {
            case .success: late?("a queued write was acknowledged by the server")
            case .failure(let error): late?("a queued write was rejected: \(error)")
            }
        }
        if semaphore.wait(timeout: .now() + 0.5) == .timedOut {
            if !repo.isConnected {
                output.writeError("offline: the write is applied locally and will be sent when the connection returns (Ctrl-C stops waiting)\n")
            }
            while semaphore.wait(timeout: .now()) == .timedOut {
                guard options.waitForInterrupt(0.2) else { continue }
                lock.lock()
                let done = result != nil
                abandoned = !done
                lock.unlock()
                if !done { throw ShellError("not acknowledged yet: the write stays queued and is sent when the connection returns") }
            }
        }
        lock.lock()
        defer { lock.unlock() }
        if case .failure(let error)? = result { throw ShellError("\(error)") }
    }

    /// Reports writes the server rejected since the last call; returns how many.
    public func reportRejectedWrites() -> Int {
        failuresLock.lock()
        let failures = asyncFailures
        asyncFailures = []
        failuresLock.unlock()
        for failure in failures {
            report("write rejected: \(failure.error)", line: nil, column: nil, source: failure.source.isEmpty ? nil : failure.source)
        }
        return failures.count
    }

    /// Waits for every write to be acknowledged; says so if some never were.
    /// Returns false when writes remain unacknowledged.
    public func finishWrites(timeout: TimeInterval = 30) -> Bool {
        let left = repo.waitForPendingWrites(timeout: timeout)
        if left > 0 {
            output.writeError(options.renderer.error("\(left) write\(left == 1 ? " was" : "s were") not acknowledged by the server within \(Int(timeout)) seconds and may be lost"))
            return false
        }
        return true
    }

    private func confirmRemoval(_ path: Path) throws -> Bool {
        if path.isRoot && options.confirm == nil {
            throw ShellError("removing / deletes the whole database: add --force to do it from a script")
        }
        guard let confirm = options.confirm else { return true }
        let value = try read(path)
        let leaves = value.leafCount
        guard path.isRoot || leaves > 100 else { return true }
        if value.isEmpty { return true }
        let what = path.isRoot ? "the whole database (\(leaves) values)" : "\(path) (\(leaves) values)"
        if confirm("remove \(what)? [y/N] ") { return true }
        output.writeError("not removed\n")
        return false
    }
}
