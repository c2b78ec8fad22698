import RTDBClient
import RTDBData

/// `edit`: a value in the user's editor, written back only if nobody changed it meanwhile.
extension Shell {
    func runEdit(_ path: Path) async throws -> Outcome {
        var opened = try await read(path)
        var text = JSONWriter.string(opened, options: .init(pretty: true)) + "\n"
        while true {
            let edited = try ExternalEditor.edit(text, name: path.keys.last ?? "root")
            if edited == text {
                output.writeError("unchanged: nothing written\n")
                return .ok
            }
            let value: Node
            do {
                value = try JSONReader.parse(edited, options: .init(base: path, serverValueCalls: true))
            } catch let error as JSONParseError {
                let (line, column) = ValueParser.lineAndColumn(edited, byte: error.offset)
                let problem = "line \(line), column \(column) of the edited value: \(error.message)"
                if options.confirm?("\(problem)\nreopen it to fix? [y/N] ") == true {
                    text = edited
                    continue
                }
                throw ShellError("not written: \(problem)")
            }
            // A compare-and-set against what was opened: a transaction that gives up when
            // the value is no longer that one.
            let primed = try await primeCache(QuerySpec(path: path))
            let expected = opened
            let done = await repo.startTransaction(path) { current in
                current == expected ? .commit(value) : .abort("changed")
            }
            let result = try await end(of: done)
            await repo.unlisten(primed.0, primed.1)
            if result.committed {
                output.writeError("written\n")
                return .ok
            }
            let now = result.snapshot
            output.writeError("""
            not written: \(path) changed since it was opened
              opened: \(Shell.brief(opened))
              now:    \(Shell.brief(now))

            """)
            guard options.confirm?("reopen with the new value (your changes are dropped)? [y/N] ") == true else { return .failed }
            opened = now
            text = JSONWriter.string(now, options: .init(pretty: true)) + "\n"
        }
    }

    /// A value's compact JSON, cut to a line.
    static func brief(_ node: Node) -> String {
        let text = JSONWriter.string(node)
        return text.count > 100 ? String(text.prefix(99)) + "…" : text
    }
}
