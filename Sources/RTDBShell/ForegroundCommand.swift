import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A command the user chose ($PAGER, $EDITOR), run by `/bin/sh` while the shell waits.
/// posix_spawn, not Process: it must stay in the terminal's foreground process group to read
/// the keyboard.
enum ForegroundCommand {
    /// Runs `sh -c script` with `arguments` as `$1`…, `input` on its standard input when
    /// given (else the shell's); returns its wait status, nil when it could not start.
    static func run(_ script: String, arguments: [String] = [], input: String? = nil) -> Int32? {
        var fds: [Int32] = [-1, -1]
        if input != nil, pipe(&fds) != 0 { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input != nil {
            posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO)
            posix_spawn_file_actions_addclose(&actions, fds[0])
            posix_spawn_file_actions_addclose(&actions, fds[1])
        }
        let words: [UnsafeMutablePointer<CChar>?] = (["/bin/sh", "-c", script, "sh"] + arguments).map { (word: String) in strdup(word) }
        defer { words.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, words + [nil], environ)
        if let input {
            close(fds[0])
            // The command may stop reading early (q in less): a closed pipe is not an error.
            if spawned == 0 { StandardOutput.writeAll(input, to: fds[1]) }
            close(fds[1])
        }
        guard spawned == 0 else { return nil }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}
