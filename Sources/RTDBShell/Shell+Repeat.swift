import Foundation

/// `repeat`: one command run again and again, as psql's `\watch` and redis-cli's `-r -i`.
extension Shell {
    func runRepeat(_ request: RepeatRequest, source: String?, lineNumber: Int) async throws -> Outcome {
        let clock = DateFormatter()
        clock.dateFormat = "HH:mm:ss"
        var run = 0
        // Ctrl-C between runs is how a repeat without a count ends: not a failure. During a
        // run it interrupts that run, as it would the command alone.
        while request.count.map({ run < $0 }) ?? true {
            if Task.isCancelled { return .ok }
            run += 1
            if options.redraws {
                // Home and clear, then a header, as watch(1) redraws its screen.
                let of = request.count.map { " of \($0)" } ?? ""
                output.write("\u{1B}[H\u{1B}[2J" + "Every \(DurationWord.describe(request.every)): \(request.text)  (run \(run)\(of), \(clock.string(from: Date())))\n\n")
            }
            let outcome = try await execute(request.command, source: source, lineNumber: lineNumber)
            guard outcome == .ok else { return outcome }
            if let failure = output.takeWriteFailure() { throw ShellError(failure) }
            if request.count.map({ run < $0 }) ?? true {
                do { try await Task.sleep(nanoseconds: UInt64(request.every * 1_000_000_000)) } catch { return .ok }
            }
        }
        return .ok
    }
}
