/// Runs lines that do not come from a person: a script on stdin or `-c` commands.
///
/// Blank lines and lines starting with `#` are skipped. On an error the message goes to
/// stderr with the line number and column; the run stops there unless `keepGoing`.
public struct BatchRunner {
    public var keepGoing = false

    public init(keepGoing: Bool = false) { self.keepGoing = keepGoing }

    /// Exit status: 0 when every line succeeded and every write was acknowledged. Each line
    /// runs as a command Ctrl-C can interrupt.
    @MainActor
    public func run<Lines: AsyncSequence>(_ lines: Lines, shell: Shell, label: (Int) -> String) async -> ExitStatus where Lines.Element == String {
        var failed = false
        var number = 0
        var iterator = lines.makeAsyncIterator()
        while let raw = try? await iterator.next() {
            number += 1
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            shell.recordHistory(line)
            let source = label(number)
            let outcome = await Interrupt.cancellable { [number] in await shell.run(line, source: source, lineNumber: number) }
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
        return await BatchRunner.finish(shell, failed: failed)
    }
}

extension BatchRunner {
    /// Ends a one-shot command: waits for its writes, reports rejections, picks the status.
    @MainActor
    public static func finish(_ shell: Shell, failed: Bool) async -> ExitStatus {
        let acknowledged = await Interrupt.cancellable { await shell.finishWrites() }
        let rejected = shell.reportRejectedWrites() > 0
        if !acknowledged { return .unacknowledgedWrites }
        return failed || rejected ? .commandFailed : .success
    }
}
