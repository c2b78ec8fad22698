import RTDBData
#if canImport(Glibc)
import Glibc
#endif

/// One saved snapshot of a database's tree (`snapshot save`): a node file of its own in the
/// folder's `snapshots/` (`NodeFile`'s format), written whole once and never changed, then a
/// trailer that says where its tree starts. Opening maps it and reads nothing else, so a
/// restore costs the same for any size; a checkpoint later copies what it needs of it into
/// the database's own node file.
///
/// Trailer, after the node file's bytes, little-endian: the root's encoding, its length u32,
/// the node file's length u64, a CRC-32 of those three, `RTDBSNAP`.
enum SnapshotFile {
    static let magic: [UInt8] = Array("RTDBSNAP".utf8)
    static let folderName = "snapshots"
    /// Numbers are written in ten digits.
    static let maximumID = 9_999_999_999

    static func path(in folder: String, id: Int) -> String {
        folder + "/" + folderName + "/" + String(id).leftPadded(to: 10) + ".rtdb"
    }

    /// The id a snapshot file's name holds.
    static func id(ofFile name: String) -> Int? {
        guard name.hasSuffix(".rtdb"), name.utf8.count == 15, let id = Int(name.dropLast(5)), id > 0 else { return nil }
        return id
    }

    /// Writes `root` as snapshot `id` of `folder`, durably (a temporary file renamed), and
    /// returns its size in bytes.
    static func write(_ root: Node, in folder: String, id: Int) throws -> Int {
        let directory = folder + "/" + folderName
        if access(directory, F_OK) != 0 {
            try FileIO.makeDirectories(directory)
            // The folder's entry is durable before a log can name a file in it.
            try FileIO.syncDirectory(folder)
        }
        let path = path(in: folder, id: id)
        let temporary = path + ".tmp"
        unlink(temporary)
        do {
            // A number of its own: the writer copies every branch read from another file.
            let writer = try NodeFileWriter(path: temporary, id: -id - 1, appendingAt: 0)
            let encoded = try writer.store(root)
            let length = try writer.finish()
            var trailer = encoded
            LittleEndian.append(UInt32(truncatingIfNeeded: encoded.count), to: &trailer)
            LittleEndian.append(UInt64(length), to: &trailer)
            LittleEndian.append(CRC32.checksum(trailer), to: &trailer)
            trailer += magic
            let fd = try FileIO.open(temporary, O_WRONLY | O_APPEND)
            defer { Glibc.close(fd) }
            try trailer.withUnsafeBytes { try FileIO.writeAll(fd, $0, path: temporary) }
            try FileIO.sync(fd, path: temporary)
            guard rename(temporary, path) == 0 else { throw StoreError.io(operation: "rename", path: temporary, errno: errno) }
            try FileIO.syncDirectory(directory)
            return length + trailer.count
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Opens snapshot `id` of `folder`: its tree, read from the file as it is walked.
    static func open(in folder: String, id: Int, onDamage: @escaping @Sendable (String) -> Void = { _ in }) throws -> Node {
        let path = path(in: folder, id: id)
        let fd = try FileIO.open(path, O_RDONLY)
        defer { Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StoreError.io(operation: "stat", path: path, errno: errno) }
        let size = Int(st.st_size)
        func damaged(_ reason: String) -> StoreError { .corrupt(file: path, offset: size, reason: reason) }
        // The fixed part of the trailer: length u32, node file length u64, CRC u32, magic.
        let fixed = 4 + 8 + 4 + magic.count
        guard size >= NodeFile.headerSize + fixed else { throw damaged("too short to be a snapshot") }
        func read(_ count: Int, at offset: Int) throws -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            guard got == count else { throw StoreError.io(operation: "read", path: path, errno: errno) }
            return bytes
        }
        let end = try read(fixed, at: size - fixed)
        guard end.suffix(magic.count).elementsEqual(magic) else { throw damaged("not a snapshot (no RTDBSNAP trailer)") }
        let (encodedLength, length, crc) = end.withUnsafeBytes { raw in
            (Int(LittleEndian.read(UInt32.self, from: raw, at: 0)), Int(clamping: LittleEndian.read(UInt64.self, from: raw, at: 4)),
             LittleEndian.read(UInt32.self, from: raw, at: 12))
        }
        // The node file, the root's encoding and the fixed part fill the file exactly.
        guard length >= NodeFile.headerSize, length <= size - fixed, encodedLength == size - fixed - length else {
            throw damaged("its trailer is damaged")
        }
        let encoded = try read(encodedLength, at: length)
        guard CRC32.checksum(encoded + Array(end.prefix(12))) == crc else { throw damaged("its trailer is damaged") }
        let file = try NodeFile(path: path, id: -id - 1, length: length, onDamage: onDamage)
        guard let root = file.node(encoded: encoded) else { throw damaged("its tree's root cannot be read") }
        return root
    }

    /// Removes the snapshot files of `folder` that no name holds and no log restores, and
    /// any a save left unfinished.
    static func removeUnused(in folder: String, restored: Set<Int>) throws {
        let directory = folder + "/" + folderName
        guard let files = try? FileIO.listDirectory(directory) else { return }
        let named = Set(try SnapshotCatalog.read(in: folder).entries.values.map(\.id))
        for name in files {
            if name.hasSuffix(".tmp") { unlink(directory + "/" + name); continue }
            guard let id = id(ofFile: name), !named.contains(id), !restored.contains(id) else { continue }
            unlink(directory + "/" + name)
        }
    }
}
