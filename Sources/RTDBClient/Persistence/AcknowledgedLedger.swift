import Foundation
import RTDBData
#if canImport(Glibc)
import Glibc
#endif

/// The queued writes the server acknowledged but the cache could not take out of its queue
/// (a full disk): a file beside the cache, its room taken when the cache opens, so that
/// recording them needs none. The next session takes them out, and never sends them again.
///
/// On disk, little-endian: `RTDBACK1`, the number of rows u32, a CRC-32 of the rows, then
/// each row's number u64; rewritten whole, in place, at each change. A file that does not
/// read (cut short by a crash while it was written) holds nothing.
final class AcknowledgedLedger {
    private let fd: Int32
    static let capacity = 8190  // rows: the file is 64 KiB
    static let size = 16 + 8 * capacity
    private static let magic = Array("RTDBACK1".utf8)
    /// The rows it holds.
    private(set) var rows: [Int64] = []

    /// Opens (creating, and taking its room) the ledger at `path`; nil when it cannot be
    /// used (then nothing is recorded, as before there was one).
    init?(path: String) {
        fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        guard posix_fallocate(fd, 0, off_t(Self.size)) == 0 else {
            Glibc.close(fd)
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: Self.size)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        if count == Self.size { rows = Self.decode(bytes) ?? [] }
    }

    deinit { Glibc.close(fd) }

    private static func decode(_ bytes: [UInt8]) -> [Int64]? {
        guard bytes.prefix(8).elementsEqual(magic) else { return nil }
        return bytes.withUnsafeBytes { raw -> [Int64]? in
            let count = Int(LittleEndian.read(UInt32.self, from: raw, at: 8))
            guard count <= capacity else { return nil }
            let end = 16 + 8 * count
            guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: raw[16..<end])) == LittleEndian.read(UInt32.self, from: raw, at: 12) else { return nil }
            return (0..<count).map { Int64(bitPattern: LittleEndian.read(UInt64.self, from: raw, at: 16 + 8 * $0)) }
        }
    }

    /// Records `rows` (replacing what it held), durably; past its capacity, the first ones.
    func record(_ rows: [Int64]) {
        let kept = rows.prefix(Self.capacity)
        self.rows = Array(kept)
        var body: [UInt8] = []
        for row in kept { LittleEndian.append(UInt64(bitPattern: row), to: &body) }
        var bytes = Self.magic
        LittleEndian.append(UInt32(kept.count), to: &bytes)
        LittleEndian.append(CRC32.checksum(body), to: &bytes)
        bytes += body
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        _ = fdatasync(fd)
    }
}
