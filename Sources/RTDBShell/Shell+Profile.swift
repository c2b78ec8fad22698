import Foundation
import RTDBClient
import RTDBData
import RTDBProtocol
import Synchronization

/// `profile`: the operations of a while, as the report of Firebase's profiler (or raw).
extension Shell {
    func profile(_ request: ProfileRequest, json: Bool) async throws {
        let captured: (report: ProfileReport, raw: [UInt8])
        if let input = request.input {
            let text = try UserFile.text(try UserFile.contents(input), of: input)
            let (records, skipped) = ProfileReport.operations(inRaw: text)
            // An empty capture is a report of nothing; a file of something else is a mistake.
            guard !records.isEmpty || skipped == 0 else {
                throw ShellError("\(input) holds no operations (\(skipped) line\(skipped == 1 ? " is" : "s are") not one): profile --raw -o FILE writes a capture to report on")
            }
            var report = ProfileReport(collapse: request.collapse)
            for record in records { report.add(record) }
            captured = (report, [])
        } else {
            captured = try await capture(request)
        }
        let sink = try ExportSink(request.output, output: output)
        do {
            if request.raw {
                try sink.write(bytes: captured.raw)
            } else if json {
                try sink.write(bytes: Array((captured.report.json.serialized() + "\n").utf8))
            } else {
                try sink.write(bytes: Array(captured.report.text().utf8))
            }
            try sink.finish()
        } catch {
            sink.abandon()
            throw error
        }
        if let file = request.output {
            let what = request.raw ? "\(captured.report.operationCount) operation\(captured.report.operationCount == 1 ? "" : "s")" : "the report"
            output.writeError("wrote \(what) to \(file)\n")
        }
    }

    /// Operations from now until Ctrl-C or the end of `request.duration`, counted (and kept,
    /// with `raw`), with their number said as they come.
    private func capture(_ request: ProfileRequest) async throws -> (report: ProfileReport, raw: [UInt8]) {
        let events = try await operations(for: "profiled")
        struct Capture {
            var report: ProfileReport
            var raw: [UInt8] = []
            var dropped = 0
            /// Set when the stream ended before the capture did, with why when it failed.
            var ended = false
            var failure: String?
        }
        let state = Mutex(Capture(report: ProfileReport(collapse: request.collapse)))
        let raw = request.raw
        let progress = options.progress
        let output = self.output
        let until = request.duration.map { "for \(DurationWord.describe($0))" } ?? "until Ctrl-C"
        if progress != .none { output.writeError("profiling \(until)...\n") }
        let reader = Task.detached {
            var said = Date()
            do {
                for try await event in events {
                    switch event {
                    case .operation(let record):
                        let count = state.withLock { capture in
                            capture.report.add(record)
                            if raw { capture.raw += record.jsonBytes + [UInt8(ascii: "\n")] }
                            return capture.report.operationCount
                        }
                        // At a terminal the count on one line; elsewhere a line every 5 s.
                        if progress == .bar && Date().timeIntervalSince(said) > 0.25 {
                            output.writeError("\r\(count) operations recorded")
                            said = Date()
                        } else if progress == .lines && Date().timeIntervalSince(said) > 5 {
                            output.writeError("\(count) operations recorded\n")
                            said = Date()
                        }
                    case .dropped(let count):
                        state.withLock { $0.dropped = $0.dropped.addingSaturated(count) }
                    }
                }
            } catch {
                if !Task.isCancelled { state.withLock { $0.failure = "\(error)" } }
            }
            state.withLock { $0.ended = true }
        }
        // Until Ctrl-C (which cancels this task), the duration, or the stream's end.
        let deadline = request.duration.map { Date().addingTimeInterval($0) }
        while !Task.isCancelled && !state.withLock({ $0.ended }) {
            if let deadline, Date() >= deadline { break }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        let endedEarly = state.withLock { $0.ended }
        reader.cancel()
        await reader.value
        let result = state.withLock { $0 }
        if progress == .bar { output.writeError("\r") }
        if progress != .none { output.writeError("\(result.report.operationCount) operation\(result.report.operationCount == 1 ? "" : "s") recorded\n") }
        if result.dropped > 0 {
            output.writeError("\(result.dropped) operation\(result.dropped == 1 ? " was" : "s were") dropped: the capture fell behind the database, and the report leaves them out\n")
        }
        if endedEarly {
            output.writeError(options.renderer.error("the capture ended early: \(result.failure ?? "the database closed its stream"); the report holds what came before"))
        }
        return (result.report, result.raw)
    }
}
