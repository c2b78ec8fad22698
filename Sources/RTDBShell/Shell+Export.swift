import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RTDBClient
import RTDBData

/// `export [PATH] [FILE]`: a subtree as JSON, read in pages of children in key order and
/// written as they come, so neither the text nor the data is ever whole in memory, and no
/// read is larger than a page (a database's single reads are limited).
extension Shell {
    /// Bytes of JSON a page of children aims at.
    private static let exportPageBytes = 2 << 20

    func runExport(_ path: Path, file: String?, priorities: Bool, quiet: Bool) async throws -> Outcome {
        let sink = try ExportSink(file, output: output)
        let meter = ProgressMeter(style: quiet ? .none : options.progress, label: "exporting \(path)",
                                  total: nil, width: options.width(), write: output.writeError)
        var keys = 0
        do {
            let priority = priorities ? try await read(path.child(".priority")).leafValue : nil
            var limit = 64
            var after: ChildKey?
            var first = true
            while true {
                var params = QueryParams().ordered(by: .key).limitToFirst(limit)
                if let after { params = params.startAfter(Node(.string(after.name))) }
                let page: Node
                do {
                    // Not kept in the disk cache: the file holds it.
                    page = try await read(QuerySpec(path: path, params: params), keepInDiskCache: false)
                } catch let error as ShellError where error.code == "TOO_BIG" {
                    // More than the database sends in one message: fewer children at a time,
                    // down to one, which is then too large on its own.
                    guard limit > 1 else {
                        throw ShellError("cannot export \(path): its \(after.map { "child after \(JSONWriter.string(Node($0.name)))" } ?? "first child") is larger than the database sends in one read; export that child's children one by one")
                    }
                    limit /= 2
                    continue
                }
                let children = page.children
                if first && children.count < limit {
                    // All of it in one page: written as get writes it (arrays as arrays).
                    let whole = children.isEmpty ? try await read(path) : page.withPriority(priority)
                    try sink.write(whole, priorities: priorities)
                    keys = children.count
                    break
                }
                let before = sink.written + sink.buffer.count
                for (key, child) in children {
                    if first {
                        sink.buffer.append(UInt8(ascii: "{"))
                        if let priority {
                            JSONWriter.writeString(".priority", to: &sink.buffer)
                            sink.buffer.append(UInt8(ascii: ":"))
                            JSONWriter.write(Node(priority), to: &sink.buffer)
                            sink.buffer.append(UInt8(ascii: ","))
                        }
                    } else {
                        sink.buffer.append(UInt8(ascii: ","))
                    }
                    first = false
                    JSONWriter.writeString(key.name, to: &sink.buffer)
                    sink.buffer.append(UInt8(ascii: ":"))
                    try sink.write(child, priorities: priorities)
                }
                keys += children.count
                try sink.flush(ifLargerThan: 1 << 20)
                meter.detail = "\(keys) keys"
                meter.update(sink.written + sink.buffer.count)
                guard children.count == limit, let last = children.last?.key else {
                    sink.buffer.append(UInt8(ascii: "}"))
                    break
                }
                after = last
                // The next page aims at the page size from what this one's children weighed.
                let perChild = max(1, (sink.written + sink.buffer.count - before) / children.count)
                limit = max(1, min(10_000, Shell.exportPageBytes / perChild))
            }
            sink.buffer.append(0x0A)
            try sink.finish()
        } catch {
            meter.clear()
            sink.abandon()
            if error is CancellationError { throw ShellError("export interrupted\(file.map { "; \($0) was not written" } ?? "")") }
            throw error
        }
        meter.clear()
        if !quiet {
            output.writeError("exported \(path)\(file.map { " to \($0)" } ?? ""): \(Outline.humanBytes(sink.written)), \(keys) \(keys == 1 ? "key" : "keys"), \(String(format: "%.1f", meter.elapsed)) s\n")
        }
        return .ok
    }
}
