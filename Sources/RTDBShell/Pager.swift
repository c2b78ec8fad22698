import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Shows output taller than the terminal through `$PAGER` (`less -FRX` when unset), as psql
/// and git do.
public enum Pager {
    /// The terminal's height in rows; nil when standard output is not a terminal.
    public static func rows() -> Int? {
        var size = winsize()
        guard isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return nil }
        return Int(size.ws_row)
    }

    /// Pages `text` when it is taller than the terminal; false when it was not paged (short
    /// enough, no terminal, or the pager could not start), so the caller prints it.
    public static func page(_ text: String) -> Bool {
        guard let rows = rows(), text.utf8.lazy.filter({ $0 == 0x0A }).count >= rows - 1 else { return false }
        let environment = ProcessInfo.processInfo.environment
        let command = environment["PAGER"].flatMap { $0.isEmpty ? nil : $0 } ?? "less -FRX"
        // posix_spawn, not Process: the pager must stay in the terminal's foreground process
        // group to read its keys from it.
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return false }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        let arguments: [UnsafeMutablePointer<CChar>?] = ["/bin/sh", "-c", command].map { (word: String) in strdup(word) }
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, arguments + [nil], environ)
        close(fds[0])
        guard spawned == 0 else {
            close(fds[1])
            return false
        }
        // The pager may quit before reading it all (q in less): a closed pipe is not an error.
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fds[1], buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { if n < 0 && errno == EINTR { continue }; break }
                offset += n
            }
        }
        close(fds[1])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return true
    }
}

/// A command's output on its way to the pager: standard output kept until the command ends,
/// messages passed on at once.
final class PagedOutput: Output, @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    private let messages: Output

    init(messages: Output) { self.messages = messages }

    var collected: String { lock.withLock { text } }
    func write(_ text: String) { lock.withLock { self.text += text } }
    func writeError(_ text: String) { messages.writeError(text) }
}
