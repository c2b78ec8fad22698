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
        do {
            guard let parsed = try CommandParser.parse(line, cwd: cwd) else { return .ok }
            return try execute(parsed, source: source, lineNumber: lineNumber)
        } catch let error as ShellError {
            report(error.message, line: line, column: error.column, source: source)
            return .failed
        } catch {
            report("\(error)", line: line, column: nil, source: source)
            return .failed
        }
    }

    /// Runs a command given as separate words (command-line arguments).
    public func run(arguments: [String]) -> Outcome {
        let line = arguments.joined(separator: " ")
        do {
            guard let parsed = try CommandParser.parse(tokens: Tokenizer.tokens(fromArguments: arguments), cwd: cwd) else { return .ok }
            return try execute(parsed, source: nil, lineNumber: 0)
        } catch let error as ShellError {
            report(error.message, line: line, column: error.column, source: nil)
            return .failed
        } catch {
            report("\(error)", line: line, column: nil, source: nil)
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
        case .help(let topic):
            output.write(topic.map(Help.command) ?? Help.overview())
        case .history:
            let width = String(history.count).count
            for (i, line) in history.enumerated() {
                output.write(String(i + 1).leftPad(width) + "  " + line + "\n")
            }
        case .exit:
            return .exit
        }
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
            let semaphore = DispatchSemaphore(value: 0)
            var result: Result<Void, DatabaseError> = .success(())
            start { result = $0; semaphore.signal() }
            semaphore.wait()
            if case .failure(let error) = result { throw ShellError("\(error)") }
        } else {
            start { [weak self] result in
                guard case .failure(let error) = result, let self else { return }
                self.failuresLock.lock()
                self.asyncFailures.append((line, source ?? "", error))
                self.failuresLock.unlock()
            }
        }
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

extension String {
    func leftPad(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
