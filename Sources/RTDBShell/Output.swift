import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the shell writes: standard output for results, standard error for messages.
public protocol Output: AnyObject {
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

    public static func writeAll(_ text: String, to fd: Int32 = STDOUT_FILENO) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    if fd == STDOUT_FILENO { closed = true }
                    return
                }
                offset += n
            }
        }
    }
}

/// Collects output in memory (tests).
public final class BufferOutput: Output {
    public private(set) var stdout = ""
    public private(set) var stderr = ""
    public init() {}
    public func write(_ text: String) { stdout += text }
    public func writeError(_ text: String) { stderr += text }
}
