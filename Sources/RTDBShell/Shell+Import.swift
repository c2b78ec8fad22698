import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RTDBClient
import RTDBData

/// `import PATH FILE`: a JSON file of any size into the database, in writes under the
/// per-write limit, checked whole before the first write.
extension Shell {
    /// Writes sent but not yet acknowledged: two keeps the connection busy without holding
    /// more than a few writes' worth of memory.
    private static let importsInFlight = 2
    /// A file up to this size is one write, atomic.
    static let importWhole = 8 << 20
    /// A larger file is cut into writes of about this size: small enough that, written out,
    /// one never passes the limit, large enough that the writes are few.
    static let importChunk = 2 << 20

    func runImport(_ target: Path, file: String, merge: Bool, chunk: Int?, quiet: Bool, json: Bool) async throws -> Outcome {
        let whole = chunk ?? Shell.importWhole
        let chunk = chunk ?? Shell.importChunk
        if await repo.isOfflineByChoice { throw ShellError("offline: import writes to the database; type 'online' first") }
        let source = try ImportSource(file, standardInputIsFree: options.standardInputIsFree)
        defer { source.close() }
        let meter = ProgressMeter(style: quiet ? .none : options.progress, label: "checking \(source.name)",
                                  total: source.size, width: options.width(), write: output.writeError)

        // The whole file is read once before anything is written: a mistake in it leaves
        // the database as it was.
        var planned = 0
        let check = ImportSplitter(target: target, merge: merge, chunk: chunk, whole: whole, window: ByteWindow(fd: source.fd, name: source.name)) { _ in
            planned += 1
            try Task.checkCancellation()
        }
        check.onProgress = meter.update
        do {
            try await check.run()
        } catch let error as ShellError {
            meter.clear()
            throw ShellError(error.message + "; nothing was imported")
        } catch is CancellationError {
            meter.clear()
            throw ShellError("import interrupted while checking \(source.name); nothing was imported")
        }
        meter.clear()
        guard planned > 0 else {
            if !quiet { output.writeError("nothing to import: \(source.name) is an empty object\n") }
            return .ok
        }
        guard lseek(source.fd, 0, SEEK_SET) == 0 else { throw ShellError("cannot read \(source.name) again: \(FileDescriptor.describe(errno))") }
        if planned > 1 && !quiet {
            output.writeError("\(source.name) is \(Outline.humanBytes(source.size)): it is imported as \(planned) writes of about \(Outline.humanBytes(chunk)), not one atomic write; if it stops, \(target) holds part of it until the same import is run again\n")
        }

        meter.restart(label: "importing into \(target)", total: source.size)
        var inFlight: [PendingWrite] = []
        var sent = 0
        var acknowledged = 0
        let repo = self.repo
        let wait = options.readTimeout
        func settle(_ write: PendingWrite) async throws {
            try await withTimeout(wait) { try await write.acknowledged() }
            acknowledged += 1
        }
        let writer = ImportSplitter(target: target, merge: merge, chunk: chunk, whole: whole, window: ByteWindow(fd: source.fd, name: source.name)) { write in
            if inFlight.count >= Shell.importsInFlight { try await settle(inFlight.removeFirst()) }
            switch write {
            // Not kept in the disk cache once written: the file holds it (see `Repo.set`).
            case let .set(path, node): inFlight.append(try await repo.set(path, node, cached: false))
            case let .update(path, updates): inFlight.append(try await repo.update(path, updates, cached: false))
            }
            sent += 1
        }
        writer.onProgress = meter.update
        do {
            try await writer.run()
            while !inFlight.isEmpty { try await settle(inFlight.removeFirst()) }
        } catch {
            meter.clear()
            let why: String
            switch error {
            case is CancellationError: why = "import interrupted"
            case is TimeoutError: why = "import stopped: the server did not acknowledge write \(acknowledged + 1) of \(planned) within \(DurationWord.describe(wait))"
            case let error as DatabaseError: why = "import stopped: write \(acknowledged + 1) of \(planned) was refused: \(error)"
            default: why = "import stopped: \(error)"
            }
            // Those sent after the one refused, or not answered yet, still go.
            let queued = sent - acknowledged - (error is DatabaseError ? 1 : 0)
            var message = why + "; \(acknowledged) of \(planned) writes were made"
            if queued > 0 { message += " (\(queued) more \(queued == 1 ? "is" : "are") queued and will still be sent)" }
            if acknowledged > 0 || queued > 0 {
                message += merge ? "; the same import run again finishes it" : "; \(target) holds part of the file until the same import is run again"
            }
            throw ShellError(message)
        }
        meter.clear()
        let seconds = meter.elapsed
        if json {
            output.write(JSONValue.object([("path", .string(target.description)), ("bytes", .number(Double(source.size))),
                                           ("writes", .number(Double(planned))),
                                           ("seconds", .number((seconds * 1000).rounded() / 1000))]).serialized() + "\n")
        } else if !quiet {
            let rate = seconds > 0 ? ", \(Outline.humanBytes(Int(Double(source.size) / seconds)))/s" : ""
            output.writeError("imported \(source.name) into \(target): \(Outline.humanBytes(source.size)) in \(planned == 1 ? "one write" : "\(planned) writes"), \(String(format: "%.1f", seconds)) s\(rate)\n")
        }
        return .ok
    }
}

/// The file an import reads: a named file, or standard input copied to a temporary file
/// (so it can be checked before it is written, and its size is known for the progress).
private struct ImportSource {
    let fd: Int32
    let name: String
    let size: Int

    init(_ file: String, standardInputIsFree: Bool) throws {
        if file == "-" {
            guard standardInputIsFree else {
                throw ShellError("import - reads the file from standard input, which carries this session's commands; give a file name, or run rtdb -c 'import PATH -' < FILE")
            }
            name = "standard input"
            (fd, size) = try ImportSource.spool(from: STDIN_FILENO, name: name)
            return
        }
        name = file
        let path = (file as NSString).expandingTildeInPath
        var info = stat()
        guard stat(path, &info) == 0 else { throw ShellError("cannot read \(file): \(FileDescriptor.describe(errno))") }
        guard info.st_mode & S_IFMT != S_IFDIR else { throw ShellError("cannot read \(file): it is a folder") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ShellError("cannot read \(file): \(FileDescriptor.describe(errno))") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            // A pipe or a device (/dev/stdin, <(…)) is read once: copied, as standard input is.
            defer { _ = Glibc.close(fd) }
            (self.fd, size) = try ImportSource.spool(from: fd, name: file)
            return
        }
        self.fd = fd
        size = Int(info.st_size)
    }

    func close() { _ = Glibc.close(fd) }

    /// Copies what `source` gives to an unlinked temporary file.
    private static func spool(from source: Int32, name: String) throws -> (Int32, Int) {
        var template = Array((NSTemporaryDirectory() + "/rtdb-import-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw ShellError("cannot make a temporary file for \(name): \(FileDescriptor.describe(errno))") }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var size = 0
        while true {
            // An endless source (/dev/zero, a stream that never closes) stops at Ctrl-C.
            if Task.isCancelled {
                _ = Glibc.close(fd)
                throw ShellError("import interrupted while reading \(name); nothing was imported")
            }
            let n: Int
            switch block.withUnsafeMutableBytes({ FileDescriptor.read(source, into: $0) }) {
            case .success(let count): n = count
            case .failure(let error):
                _ = Glibc.close(fd)
                throw ShellError("cannot read \(name): \(error.description)")
            }
            if n == 0 { break }
            if let code = block.withUnsafeBytes({ FileDescriptor.writeAll(fd, UnsafeRawBufferPointer(rebasing: $0[0..<n])) }) {
                _ = Glibc.close(fd)
                throw ShellError("cannot copy \(name) to a temporary file: \(FileDescriptor.describe(code))")
            }
            size += n
        }
        guard lseek(fd, 0, SEEK_SET) == 0 else { _ = Glibc.close(fd); throw ShellError("cannot read the copy of \(name) again") }
        return (fd, size)
    }
}
