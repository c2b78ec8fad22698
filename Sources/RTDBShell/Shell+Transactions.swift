import RTDBClient
import RTDBData
import RTDBProtocol

/// `tx`: runs a transaction through the client core and prints its end.
extension Shell {
    /// Runs a transaction and waits for its end (Ctrl-C stops the waiting, not the
    /// transaction). Committed is success; aborted prints why and fails. Offline by choice
    /// it cannot be waited for: it queues, and `online` (in a script) or a notice (at the
    /// terminal) reports it.
    func runTransaction(_ path: Path, _ change: TransactionChange, verbose: Bool, renderer: Renderer, json: Bool,
                        source: String?, lineNumber: Int) async throws -> Outcome {
        let repo = self.repo
        let offline = await repo.isOfflineByChoice
        let primed = try await primeCache(QuerySpec(path: path))
        // The listen stays until the transaction ends, which takes over the cached value.
        defer { Task { [repo] in await repo.unlisten(primed.0, primed.1) } }
        let log = TransactionLog()
        let done = await repo.startTransaction(path) { current in
            do {
                let update = try change.apply(to: current, at: path)
                log.attempt(current, update)
                return update
            } catch let error as ShellError {
                log.failed(current, error)
                return .abort(nil)
            } catch {
                return .abort("\(error)")
            }
        }
        // Offline by choice, one that ended at once (an abort, an error) is reported now.
        if offline && done.current == nil {
            if let late = options.backgroundOutput {
                output.writeError("offline: the transaction is queued and runs after 'online'; its outcome is printed when it comes\n")
                Shell.printWhenResolved(done, at: path, log: log, late: late)
            } else {
                output.writeError("offline: the transaction is queued; 'online' sends it and prints its outcome\n")
                queuedTransactions.append(QueuedTransaction(done: done, log: log, verbose: verbose, renderer: renderer,
                                                            json: json, source: source))
            }
            return .ok
        }
        let outcome: Result<TransactionResult, Error>
        do {
            outcome = .success(try await end(of: done))
        } catch let error as ShellError {
            // Past the deadline it goes on: at the terminal its end is printed when it comes.
            if let late = options.backgroundOutput { Shell.printWhenResolved(done, at: path, log: log, late: late) }
            throw error
        } catch is CancellationError {
            // Ctrl-C stops the waiting; the transaction goes on, its outcome printed when it comes.
            if let late = options.backgroundOutput { Shell.printWhenResolved(done, at: path, log: log, late: late) }
            throw ShellError("still running: the transaction goes on (it waits for the connection) and its outcome is printed when it comes")
        } catch {
            outcome = .failure(error)
        }
        return try present(outcome, log: log, verbose: verbose, renderer: renderer, json: json)
    }

    /// After `online`: waits for the transactions the script queued while offline, oldest
    /// first, and prints each one's end; failed when one of them did not commit.
    func reportQueuedTransactions() async throws -> Outcome {
        var outcome = Outcome.ok
        while let queued = queuedTransactions.first {
            let result: Result<TransactionResult, Error>
            do {
                result = .success(try await end(of: queued.done))
            } catch is CancellationError {
                throw ShellError("still running: \(queuedTransactions.count) queued transaction\(queuedTransactions.count == 1 ? "" : "s") not ended yet")
            } catch {
                result = .failure(error)
            }
            queuedTransactions.removeFirst()
            do {
                if try present(result, log: queued.log, verbose: queued.verbose, renderer: queued.renderer, json: queued.json) == .failed {
                    outcome = .failed
                }
            } catch let error as ShellError {
                report(error.message, line: nil, column: error.column, source: queued.source)
                outcome = .failed
            }
        }
        return outcome
    }

    /// Waits for a transaction's end: at most `readTimeout` (or until Ctrl-C), then an
    /// error; the transaction goes on meanwhile.
    func end(of done: OneShot<TransactionResult>) async throws -> TransactionResult {
        do {
            return try await withTimeout(options.readTimeout) { try await done.value() }
        } catch is TimeoutError {
            throw ShellError("the transaction did not end within \(DurationWord.describe(options.readTimeout)): the server does not answer; it is still queued")
        }
    }

    /// Prints a transaction's end: the attempts when asked, then the committed value, or
    /// why it was aborted and the value that stays. Throws what ended it with an error.
    private func present(_ outcome: Result<TransactionResult, Error>, log: TransactionLog, verbose: Bool,
                         renderer: Renderer, json: Bool) throws -> Outcome {
        if verbose {
            for (number, attempt) in log.attempts.enumerated() {
                output.writeError("attempt \(number + 1): \(attempt)\n")
            }
        }
        let result: TransactionResult
        switch outcome {
        case .success(let value): result = value
        case .failure(let error as DatabaseError): throw ShellError("the transaction failed: \(error)")
        case .failure(let error): throw error
        }
        // EXPR failed on the value it saw: an error at its position, like a parse error.
        if let error = log.error { throw error }
        if json {
            var members: [(String, JSONValue)] = [("committed", .bool(result.committed)), ("attempts", .number(Double(result.attempts)))]
            if let reason = result.abortReason { members.append(("reason", .string(reason))) }
            members.append(("value", Self.jsonValue(result.snapshot)))
            output.write(JSONValue.object(members).serialized() + "\n")
        } else if result.committed {
            output.write(renderer.value(result.snapshot))
        } else {
            output.writeError(renderer.error("aborted: \(result.abortReason ?? "the expression gave no value"); the value stays"))
            output.write(renderer.value(result.snapshot))
        }
        return result.committed ? .ok : .failed
    }

    /// At the terminal: the end of a transaction nobody waits for, as a line above the prompt.
    private static func printWhenResolved(_ done: OneShot<TransactionResult>, at path: Path, log: TransactionLog,
                                          late: @escaping @Sendable (String) -> Void) {
        done.whenResolved { outcome in
            switch outcome {
            case .success(let result) where result.committed:
                late("the transaction at \(path) committed: \(JSONWriter.string(result.snapshot))")
            case .success(let result):
                late("the transaction at \(path) was aborted: \(log.error?.message ?? result.abortReason ?? "the expression gave no value")")
            case .failure(let error):
                late("the transaction at \(path) failed: \(error)")
            }
        }
    }

    /// Listens at `query` and waits (up to the offline wait) for its data to be cached: a
    /// transaction's first attempt then runs on the server's value rather than on nothing, and
    /// a background watch's first events are printed before the prompt comes back. The
    /// caller ends the listen.
    func primeCache(_ query: QuerySpec) async throws -> (QuerySpec, EventRegistration) {
        let first = OneShot<Node>()
        let registration = EventRegistration(types: [.value], callback: { first.resolve(.success($0.node)) },
                                             cancel: { first.resolve(.failure($0)) })
        await repo.listen(query, registration)
        // Offline by choice the core's offline wait is short: what is cached comes at once.
        let wait = min(options.readTimeout, await repo.offlineReadTimeout)
        do {
            _ = try await withTimeout(wait) { try await first.value() }
        } catch is TimeoutError {
            // Offline with nothing cached: the transaction starts on nothing and waits.
        } catch {
            await repo.unlisten(query, registration)
            throw (error as? DatabaseError).map { ShellError($0) } ?? error
        }
        return (query, registration)
    }
}
