#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes on a file descriptor as the shell needs them: retried when a signal
/// interrupts them, writes whole (or given up, for a reader that does not read).
enum FileDescriptor {
    /// Writes all of `bytes`; the errno of a failure, nil when everything was written.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            guard let base = bytes.baseAddress else { return nil }
            let n = write(fd, base + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += n
        }
        return nil
    }

    /// `writeAll` for a descriptor whose writes may wait on a reader for ever (a pipe, a
    /// socket): it waits for room 100 ms at a time and writes what fits (a pipe with room
    /// takes `PIPE_BUF` bytes without blocking), until `giveUp` says to stop: nil when all
    /// was written, ECANCELED when it gave up, else the errno of a failure.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, giveUp: () -> Bool) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            guard let base = bytes.baseAddress else { return nil }
            var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let count = poll(&ready, 1, 100)
            if count < 0 {
                if errno == EINTR { continue }
                return errno
            }
            // Asked only when no room came for 100 ms: a reader that reads, however slowly,
            // gets all of it.
            if count == 0 {
                if giveUp() { return ECANCELED }
                continue
            }
            // Room, or an error (POLLERR, POLLHUP) that the write reports.
            let n = write(fd, base + offset, min(bytes.count - offset, Int(PIPE_BUF)))
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return errno
            }
            offset += n
        }
        return nil
    }

    /// Reads what comes, up to the buffer's size: the count (0 at the end), or the errno of
    /// a failure.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, ReadError> {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return .success(n) }
            if errno != EINTR { return .failure(ReadError(code: errno)) }
        }
    }

    struct ReadError: Error {
        let code: Int32
        var description: String { FileDescriptor.describe(code) }
    }

    /// What an errno says ("No such file or directory").
    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
