/// Runs lines that do not come from a person: a script on stdin or `-c` commands.
///
/// Blank lines and lines starting with `#` are skipped. On an error the message goes to
/// stderr with the line number and column; the run stops there unless `keepGoing`.
public struct BatchRunner {
    public var keepGoing = false

    public init(keepGoing: Bool = false) { self.keepGoing = keepGoing }

    /// Exit status: 0 when every line succeeded and every write was acknowledged.
    public func run<S: Sequence>(_ lines: S, shell: Shell, label: (Int) -> String) -> ExitStatus where S.Element == String {
        var failed = false
        var number = 0
        for raw in lines {
            number += 1
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            shell.recordHistory(line)
            let outcome = shell.run(line, source: label(number), lineNumber: number)
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
        let acknowledged = shell.finishWrites()
        if shell.reportRejectedWrites() > 0 { failed = true }
        if !acknowledged { return .unacknowledgedWrites }
        return failed ? .commandFailed : .success
    }
}

extension BatchRunner {
    /// Ends a one-shot command: waits for its writes, reports rejections, picks the status.
    public static func finish(_ shell: Shell, failed: Bool) -> ExitStatus {
        let acknowledged = shell.finishWrites()
        let rejected = shell.reportRejectedWrites() > 0
        if !acknowledged { return .unacknowledgedWrites }
        return failed || rejected ? .commandFailed : .success
    }
}
