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

/// Where an export goes: a file, written under a temporary name and renamed when complete
/// (an export that fails leaves no half file); a device or a pipe (`/dev/null`, a FIFO),
/// written as it is; or the shell's output.
@MainActor
private final class ExportSink {
    var buffer: [UInt8] = []
    private(set) var written = 0
    private let output: Output
    private let file: String?
    private var fd: Int32 = -1
    private var temporary = ""
    private var target = ""
    /// Written in place: a device or a pipe, which a file renamed over would replace.
    private var direct = false

    init(_ file: String?, output: Output) throws {
        self.output = output
        self.file = file
        guard let file else { return }
        target = (file as NSString).expandingTildeInPath
        var info = stat()
        let exists = stat(target, &info) == 0
        if exists && info.st_mode & S_IFMT == S_IFDIR { throw ShellError("cannot write \(file): it is a folder") }
        if exists && info.st_mode & S_IFMT != S_IFREG {
            direct = true
            fd = open(target, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw ShellError("cannot write \(file): \(FileDescriptor.describe(errno))") }
            return
        }
        let folder = (target as NSString).deletingLastPathComponent
        temporary = (folder.isEmpty ? "." : folder) + "/." + (target as NSString).lastPathComponent + ".rtdb-export-\(getpid())"
        fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ShellError("cannot write \(file): \(FileDescriptor.describe(errno))") }
    }

    func flush(ifLargerThan threshold: Int = 0) throws {
        guard buffer.count > threshold else { return }
        try send(&buffer)
    }

    /// Writes a value, in pieces as it grows.
    func write(_ node: Node, priorities: Bool) throws {
        var failure: Error?
        JSONWriter.write(node, to: &buffer, options: .init(export: priorities), draining: 1 << 20) { [unowned self] bytes in
            guard failure == nil else { return bytes.removeAll(keepingCapacity: true) }
            do { try self.send(&bytes) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    private func send(_ bytes: inout [UInt8]) throws {
        if fd < 0 {
            output.write(String(decoding: bytes, as: UTF8.self))
            if let failure = output.takeWriteFailure() { throw ShellError(failure) }
        } else {
            if let code = bytes.withUnsafeBytes({ FileDescriptor.writeAll(fd, $0) }) {
                throw ShellError("cannot write \(file ?? ""): \(FileDescriptor.describe(code))")
            }
        }
        written += bytes.count
        bytes.removeAll(keepingCapacity: true)
    }

    /// Everything written: the file takes its name.
    func finish() throws {
        try flush()
        guard fd >= 0 else { return }
        if direct {
            let closeError = Glibc.close(fd) == 0 ? nil : errno
            fd = -1
            if let code = closeError { throw ShellError("cannot write \(file ?? ""): \(FileDescriptor.describe(code))") }
            return
        }
        let syncError = fsync(fd) == 0 ? nil : errno
        let closeError = Glibc.close(fd) == 0 ? nil : errno
        fd = -1
        if let code = syncError ?? closeError {
            unlink(temporary)
            throw ShellError("cannot write \(file ?? ""): \(FileDescriptor.describe(code))")
        }
        guard rename(temporary, target) == 0 else {
            let e = errno
            unlink(temporary)
            throw ShellError("cannot write \(file ?? ""): \(FileDescriptor.describe(e))")
        }
    }

    func abandon() {
        guard fd >= 0 else { return }
        _ = Glibc.close(fd)
        fd = -1
        if !direct { unlink(temporary) }
    }
}
