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
/// any other failure (a full disk) is, with its reason (`takeWriteFailure`). Each call
/// writes whole, except to a pipe or socket whose reader stopped reading when Ctrl-C or
/// SIGTERM comes: that output is cut short, and the command fails saying so.
public final class StandardOutput: Output {
    public init() { signal(SIGPIPE, SIG_IGN) }
    public func write(_ text: String) { StandardOutput.writeAll(text) }
    public func writeError(_ text: String) { StandardOutput.writeAll(text, to: STDERR_FILENO) }

    public func takeWriteFailure() -> String? {
        StandardOutput.failure.withLock { failure in
            defer { failure = nil }
            return failure.map {
                $0 == ECANCELED ? "the output was cut short: interrupted while its reader was not reading"
                                : "cannot write the output: \(FileDescriptor.describe($0))"
            }
        }
    }

    /// Whether stdout can take no more; read without waiting for a writer (the interrupt
    /// watcher polls it).
    public static var closed: Bool { isClosed.load(ordering: .relaxed) }
    private static let isClosed = Atomic(false)
    /// The errno of the first failed write to stdout not yet reported (not EPIPE;
    /// ECANCELED: given up on an interrupt). Its lock is held while writing: one writer at
    /// a time, so lines from a background watch never cut into others.
    private static let failure = Mutex<Int32?>(nil)

    public static func writeAll(_ text: String, to fd: Int32 = STDOUT_FILENO) {
        let waits = fd == STDOUT_FILENO ? stdoutWaitsOnReader : fd == STDERR_FILENO && stderrWaitsOnReader
        failure.withLock { failure in
            var text = text
            // Once one write gave up, the reader is not reading and the process is ending:
            // nothing more goes to that descriptor (the cut is reported once).
            if waits && abandoned.load(ordering: .relaxed) {
                if fd == STDOUT_FILENO && failure == nil { failure = ECANCELED }
                return
            }
            let result = text.withUTF8 { bytes in
                waits ? FileDescriptor.writeAll(fd, UnsafeRawBufferPointer(bytes), giveUp: { wasInterrupted.load(ordering: .relaxed) })
                      : FileDescriptor.writeAll(fd, UnsafeRawBufferPointer(bytes))
            }
            guard let code = result else { return }
            if code == ECANCELED { abandoned.store(true, ordering: .relaxed) }
            guard fd == STDOUT_FILENO else { return }
            isClosed.store(true, ordering: .relaxed)
            if code != EPIPE && failure == nil { failure = code }
        }
    }

    /// Ctrl-C or SIGTERM while a command runs: from then on, a write to a pipe or socket
    /// whose reader does not read gives up instead of waiting for ever, so the command and
    /// the process end (acknowledged writes are durable already). Only scripts and one-shot
    /// commands write to pipes, and both end after an interrupt.
    public static func interrupted() { wasInterrupted.store(true, ordering: .relaxed) }
    private static let wasInterrupted = Atomic(false)
    private static let abandoned = Atomic(false)
    /// Whether stdout, or stderr, is a pipe or a socket: a reader that does not read holds
    /// its writes up.
    private static let stdoutWaitsOnReader = waitsOnReader(STDOUT_FILENO)
    private static let stderrWaitsOnReader = waitsOnReader(STDERR_FILENO)

    private static func waitsOnReader(_ fd: Int32) -> Bool {
        var status = stat()
        guard fstat(fd, &status) == 0 else { return false }
        return status.st_mode & S_IFMT == S_IFIFO || status.st_mode & S_IFMT == S_IFSOCK
    }
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
