import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One process owns a data folder at a time: an exclusive `flock` on `LOCK`, holding our pid
/// so that a second process can say who has it. The kernel drops the lock if we die.
final class FolderLock {
    private let fd: Int32

    init(folder: String) throws {
        let path = folder + "/LOCK"
        fd = try FileIO.open(path, O_RDWR | O_CREAT)
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let holder = (try? FileIO.readFile(path)).map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
            Glibc.close(fd)
            throw StoreError.folderInUse(folder: folder, pid: holder.flatMap { $0.isEmpty ? nil : $0 })
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    func release() {
        _ = ftruncate(fd, 0)
        flock(fd, LOCK_UN)
        Glibc.close(fd)
    }
}
