import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One process owns a folder at a time: an exclusive `flock` on a lock file in it, holding
/// the owner's pid so that a second process can say who has it. The kernel drops the lock
/// when the owner dies, so a crash never leaves a folder locked.
public final class FolderLock: Sendable {
    public enum Failure: Error {
        /// Another process holds it (its pid, when the file says).
        case held(pid: String?)
        /// The lock file cannot be opened (the errno).
        case unusable(Int32)
    }

    private let fd: Int32
    private let released = Atomic(false)

    /// Takes the lock of `folder` in its file `name`, without waiting.
    public init(folder: String, name: String) throws(Failure) {
        let path = folder + "/" + name
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .unusable(errno) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = read(fd, &buffer, buffer.count)
            Glibc.close(fd)
            let pid = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw .held(pid: pid.isEmpty ? nil : pid)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
    }

    /// Lets the folder go (once; later calls do nothing).
    public func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        _ = ftruncate(fd, 0)
        flock(fd, LOCK_UN)
        Glibc.close(fd)
    }
}
