import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the shell writes: standard output for results, standard error for messages.
/// Written from the shell and, for background watches, from the client core's queue: each
/// call writes whole.
public protocol Output: AnyObject, Sendable {
    func write(_ text: String)
    func writeError(_ text: String)
}

/// The process's own stdout and stderr. A closed stdout (a reader like `head` that went
/// away) is noted, not fatal, so a watch can end cleanly.
public final class StandardOutput: Output {
    public init() { signal(SIGPIPE, SIG_IGN) }
    public func write(_ text: String) { StandardOutput.writeAll(text) }
    public func writeError(_ text: String) { StandardOutput.writeAll(text, to: STDERR_FILENO) }

    nonisolated(unsafe) public private(set) static var closed = false
    /// One writer at a time, so lines from a background watch never cut into others.
    private static let lock = NSLock()

    public static func writeAll(_ text: String, to fd: Int32 = STDOUT_FILENO) {
        lock.lock()
        defer { lock.unlock() }
        var text = text
        let failed = text.withUTF8 { FileDescriptor.writeAll(fd, UnsafeRawBufferPointer($0)) != nil }
        if failed && fd == STDOUT_FILENO { closed = true }
    }
}

/// Collects output in memory (tests).
///
/// `@unchecked Sendable`: guarded by `lock`, which the compiler cannot see.
public final class BufferOutput: Output, @unchecked Sendable {
    private let lock = NSLock()
    private var out = ""
    private var err = ""
    public init() {}
    public var stdout: String { lock.withLock { out } }
    public var stderr: String { lock.withLock { err } }
    public func write(_ text: String) { lock.withLock { out += text } }
    public func writeError(_ text: String) { lock.withLock { err += text } }
}
