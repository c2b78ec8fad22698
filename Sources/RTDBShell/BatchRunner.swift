/// Runs lines that do not come from a person: a script on stdin or `-c` commands.
///
/// Blank lines and lines starting with `#` are skipped. On an error the message goes to
/// stderr with the line number and column; the run stops there unless `keepGoing`.
public struct BatchRunner {
    public var keepGoing = false

    public init(keepGoing: Bool = false) { self.keepGoing = keepGoing }

    /// Exit status: 0 when every line succeeded and every write was acknowledged. Ctrl-C
    /// interrupts the line being run and stops the script; its writes are still waited for.
    /// `nextLine` gives the script's lines, nil at its end; a line too long to keep fails.
    @MainActor
    public func run(_ nextLine: @escaping @MainActor () async throws(ScriptLineTooLong) -> String?, shell: Shell,
                    label: @escaping @Sendable (Int) -> String) async -> ExitStatus {
        let failed = await Interrupt.cancellable { await runLines(nextLine, shell: shell, label: label) }
        return await BatchRunner.finish(shell, failed: failed)
    }

    /// Runs the lines without the end's wait for writes (a startup file); true when one failed.
    /// A line that ends inside a value (an open `{`, `[` or quote) goes on with the next ones.
    @MainActor
    public func runLines(_ nextLine: @escaping @MainActor () async throws(ScriptLineTooLong) -> String?, shell: Shell, remember: Bool = true,
                         label: @escaping @Sendable (Int) -> String) async -> Bool {
        var failed = false
        var number = 0
        while !Task.isCancelled {
            let first = number + 1
            let outcome: Shell.Outcome
            do throws(ScriptLineTooLong) {
                guard let raw = try await nextLine() else { break }
                number += 1
                var line = BatchRunner.trimmed(raw)
                if line.isEmpty || line.hasPrefix("#") { continue }
                while Tokenizer.isUnfinished(line), line.utf8.count <= ValueParser.maxWriteBytes, let more = try await nextLine() {
                    number += 1
                    line += "\n" + more
                }
                if remember { shell.recordHistory(line) }
                outcome = await shell.run(line, source: label(first), lineNumber: first)
            } catch {
                number += 1
                shell.report("\(error)", line: nil, column: nil, source: label(number))
                outcome = .failed
            }
            if shell.reportRejectedWrites() > 0 { failed = true }
            switch outcome {
            case .ok: continue
            case .exit: break
            case .failed:
                failed = true
                if keepGoing { continue }
            }
            break
        }
        return failed
    }
}

extension BatchRunner {
    /// The line without the spaces and tabs around it (Foundation's `.whitespaces`). Nearly
    /// every line of a script has none, and asking Foundation cost 5% of a piped script's time.
    static func trimmed(_ raw: String) -> String {
        // Only a space, a tab or a byte beyond ASCII can begin a character of `.whitespaces`.
        func plain(_ b: UInt8) -> Bool { b != 0x20 && b != 0x09 && b < 0x80 }
        guard let first = raw.utf8.first, let last = raw.utf8.last, !plain(first) || !plain(last) else { return raw }
        return raw.trimmingCharacters(in: .whitespaces)
    }

    /// Ends a one-shot command: waits for its writes, reports rejections, picks the status.
    @MainActor
    public static func finish(_ shell: Shell, failed: Bool) async -> ExitStatus {
        let acknowledged = await Interrupt.cancellable { await shell.finishWrites() }
        // After the writes' acknowledgements, so their events have been printed.
        await shell.stopBackgroundWatches()
        let rejected = shell.reportRejectedWrites() > 0
        if !acknowledged { return .unacknowledgedWrites }
        return failed || rejected ? .commandFailed : .success
    }
}
