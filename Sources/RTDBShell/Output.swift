import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where the shell writes: standard output for results, standard error for messages.
/// Written from the shell and, for background watches, from the client core's queue: each
/// call writes whole.
public protocol Output: AnyObject, Sendable {
    func write(_ text: String)
    func writeError(_ text: String)
    /// Why results could not be written since the last call (a full disk), as the error says
    /// it, once; nil if they all were.
    func takeWriteFailure() -> String?
}

extension Output {
    public func takeWriteFailure() -> String? { nil }
}

/// The process's own stdout and stderr. A stdout that can take no more ends what writes
/// to it, so a watch stops: a reader like `head` that went away is noted, not an error;
/// any other failure (a full disk) is, with its reason (`takeWriteFailure`).
public final class StandardOutput: Output {
    public init() { signal(SIGPIPE, SIG_IGN) }
    public func write(_ text: String) { StandardOutput.writeAll(text) }
    public func writeError(_ text: String) { StandardOutput.writeAll(text, to: STDERR_FILENO) }

    public func takeWriteFailure() -> String? {
        StandardOutput.failure.withLock { failure in
            defer { failure = nil }
            return failure.map { "cannot write the output: \(FileDescriptor.describe($0))" }
        }
    }

    /// Whether stdout can take no more; read without waiting for a writer (the interrupt
    /// watcher polls it).
    public static var closed: Bool { isClosed.load(ordering: .relaxed) }
    private static let isClosed = Atomic(false)
    /// The errno of the first failed write to stdout not yet reported (not EPIPE). Its lock is
    /// held while writing: one writer at a time, so lines from a background watch never cut
    /// into others.
    private static let failure = Mutex<Int32?>(nil)

    public static func writeAll(_ text: String, to fd: Int32 = STDOUT_FILENO) {
        let waits = fd == STDOUT_FILENO && waitsOnReader
        if waits && abandoned.load(ordering: .relaxed) { return }
        failure.withLock { failure in
            var text = text
            let since = interruptions.load(ordering: .relaxed)
            let result = text.withUTF8 { bytes in
                waits ? FileDescriptor.writeAll(fd, UnsafeRawBufferPointer(bytes), giveUp: { interruptions.load(ordering: .relaxed) != since })
                      : FileDescriptor.writeAll(fd, UnsafeRawBufferPointer(bytes))
            }
            guard let code = result, fd == STDOUT_FILENO else { return }
            if code == ECANCELED {
                abandoned.store(true, ordering: .relaxed)
                return
            }
            isClosed.store(true, ordering: .relaxed)
            if code != EPIPE && failure == nil { failure = code }
        }
    }

    /// Ctrl-C or SIGTERM while a command runs. A write to a stdout that waits on a reader
    /// who does not read gives up then, and stdout takes nothing more: the command ends
    /// instead of waiting for ever (its acknowledged writes are durable already).
    public static func interrupted() { interruptions.add(1, ordering: .relaxed) }
    private static let interruptions = Atomic<Int>(0)
    private static let abandoned = Atomic(false)
    /// Whether stdout is a pipe or a socket, whose writes wait while its reader does not read.
    private static let waitsOnReader: Bool = {
        var status = stat()
        guard fstat(STDOUT_FILENO, &status) == 0 else { return false }
        return status.st_mode & S_IFMT == S_IFIFO || status.st_mode & S_IFMT == S_IFSOCK
    }()
}

/// Collects output in memory (tests).
public final class BufferOutput: Output {
    private let texts = Mutex((out: "", err: ""))
    public init() {}
    public var stdout: String { texts.withLock { $0.out } }
    public var stderr: String { texts.withLock { $0.err } }
    public func write(_ text: String) { texts.withLock { $0.out += text } }
    public func writeError(_ text: String) { texts.withLock { $0.err += text } }
}
