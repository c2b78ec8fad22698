import Foundation
import RTDBData
#if canImport(Glibc)
import Glibc
#endif

/// Where an export or a profile goes: a file, written under a temporary name and renamed when complete
/// (an export that fails leaves no half file); a device or a pipe (`/dev/null`, a FIFO),
/// written as it is; or the shell's output.
@MainActor
final class ExportSink {
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

    /// Writes `bytes`, in pieces as they come.
    func write(bytes: [UInt8]) throws {
        buffer += bytes
        try flush(ifLargerThan: 1 << 20)
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
