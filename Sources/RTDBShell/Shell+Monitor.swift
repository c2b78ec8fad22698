import RTDBData
import RTDBProtocol

/// `monitor`: every operation on the database from every client, as it runs.
extension Shell {
    /// The database's operations from now on (for `monitor` and `profile`); `use` names what
    /// the database cannot be when it keeps none.
    func operations(for use: String) async throws -> AsyncThrowingStream<MonitorEvent, Error> {
        guard let source = options.monitor else { throw ShellError("this database cannot be \(use)") }
        do { return try await source.operations() } catch let error as ShellError { throw error } catch {
            throw ShellError("\(error)")
        }
    }

    func monitor(_ path: Path, background: Bool, json: Bool, renderer: Renderer) async throws -> Outcome {
        let formatter = OperationFormatter(json: json || !renderer.pretty, color: renderer.color && !json)
        let events = try await operations(for: "monitored")
        // Operations at or below the path; those of no path (connections) only at the root.
        let shows: @Sendable (OperationRecord) -> Bool = { record in
            guard let at = record.path else { return path.isRoot }
            return path.contains(at)
        }
        if background {
            // At the terminal, above the prompt; in a script, as lines of its output.
            let output = self.output
            let print = options.backgroundOutput ?? { output.write($0 + "\n") }
            let warn = options.backgroundOutput ?? { output.writeError($0 + "\n") }
            let id = nextWatchID
            nextWatchID += 1
            let seen = BackgroundWatch.Counter()
            // Off the shell's actor: formatting each operation competes with nothing typed.
            let task = Task.detached {
                do {
                    for try await event in events {
                        switch event {
                        case .operation(let record):
                            guard shows(record) else { continue }
                            seen.count()
                            print(formatter.line(record, watchID: id))
                        case .dropped(let count):
                            warn("[\(id)] " + OperationFormatter.dropped(count))
                        }
                    }
                    if !Task.isCancelled { warn("[\(id)] monitor ended: the database closed its stream") }
                } catch {
                    if !Task.isCancelled { warn("[\(id)] monitor ended: \(error)") }
                }
            }
            backgroundMonitors.append(BackgroundMonitor(id: id, path: path, task: task, seen: seen))
            let machine = json || !renderer.pretty
            output.write(machine ? "{\"watch\":\(id)}\n" : "monitor \(id) started on \(path); 'unwatch \(id)' stops it\n")
            return .ok
        }
        do {
            for try await event in events {
                switch event {
                case .operation(let record):
                    if shows(record) { output.write(formatter.line(record) + "\n") }
                case .dropped(let count):
                    output.writeError(OperationFormatter.dropped(count) + "\n")
                }
            }
        } catch is CancellationError {
            return .ok
        } catch {
            if Task.isCancelled { return .ok }
            throw ShellError("the monitor ended: \(error)")
        }
        if Task.isCancelled { return .ok }
        throw ShellError("the monitor ended: the database closed its stream")
    }
}
