import RTDBData

/// The data folder's `HEAD`: which node file holds the tree, how much of it is whole, which
/// logs that tree already contains, and the query indexes stored with it. It is replaced
/// whole (a temporary file renamed over it) after the node file is durable, so it always
/// names a complete tree.
///
/// On disk, little-endian: `RTDBHEAD`, format version u32, node file number u64, its length
/// u64, its length after its last full copy u64, the last log it covers u64, the root node's
/// encoding (u32 length, bytes; see `NodeFile`), the number of indexes u32 and for each its
/// location and ordering (each u32 length, UTF-8, as `Path.wireString` and `Index.description`
/// write them) and the link to its top record (offset u64, entries u64), in version 4 the
/// writes applied for each client as of the tree (see `WriteReceipts.encode`), then a CRC-32
/// of everything before it. Version 2 had no indexes (the root ran to the checksum), version
/// 3 no receipts; both are read.
struct FolderHead: Equatable {
    static let magic: [UInt8] = Array("RTDBHEAD".utf8)
    /// Format 1 was a JSON snapshot (`snapshot-N.json`) and no head; an open converts it.
    static let version: UInt32 = 4
    /// How a head of a version this rtdb does not read is described (not damage: a newer rtdb wrote it).
    static let unknownVersion = "format version"

    /// A query index stored in the node file.
    struct IndexLink: Equatable {
        var path: Path
        var index: Index
        var offset: Int
        var size: Int
    }

    var nodesID: Int
    var nodesLength: Int
    /// The node file's length when it was last written whole: what it grew by since is
    /// (mostly) branches later checkpoints replaced, so a full copy is due when it doubles.
    var compactedLength: Int
    /// Logs up to this number are in the tree.
    var covered: Int
    var root: [UInt8]
    var indexes: [IndexLink] = []
    var receipts = WriteReceipts()

    /// The oldest version that holds what this head has, so an older rtdb still opens a
    /// folder that uses nothing it does not know.
    var formatVersion: UInt32 { !receipts.isEmpty ? 4 : !indexes.isEmpty ? 3 : 2 }

    func encode() -> [UInt8] {
        var out = FolderHead.magic
        let version = formatVersion
        LittleEndian.append(version, to: &out)
        for v in [nodesID, nodesLength, compactedLength, covered] { LittleEndian.append(UInt64(v), to: &out) }
        LittleEndian.append(UInt32(truncatingIfNeeded: root.count), to: &out)
        out += root
        if version >= 3 { LittleEndian.append(UInt32(truncatingIfNeeded: indexes.count), to: &out) }
        for link in indexes {
            for text in [link.path.wireString, link.index.description] {
                LittleEndian.append(UInt32(truncatingIfNeeded: text.utf8.count), to: &out)
                out += text.utf8
            }
            LittleEndian.append(UInt64(link.offset), to: &out)
            LittleEndian.append(UInt64(link.size), to: &out)
        }
        if version >= 4 { receipts.encode(into: &out) }
        LittleEndian.append(CRC32.checksum(out), to: &out)
        return out
    }

    static func decode(_ bytes: [UInt8], path: String) throws -> FolderHead {
        func damaged(_ reason: String, _ offset: Int) -> StoreError { .corrupt(file: path, offset: offset, reason: reason) }
        guard bytes.count >= 8 + 4 + 32 + 4 + 4, bytes.prefix(8).elementsEqual(magic) else { throw damaged("not an rtdb head file", 0) }
        let end = bytes.count - 4  // where the checksum starts
        let crc = bytes.withUnsafeBytes { LittleEndian.read(UInt32.self, from: $0, at: end) }
        guard bytes.withUnsafeBytes({ CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[..<end])) }) == crc else {
            throw damaged("checksum mismatch", end)
        }
        return try bytes.withUnsafeBytes { raw in
            let version = LittleEndian.read(UInt32.self, from: raw, at: 8)
            guard version >= 2 && version <= FolderHead.version else {
                throw damaged("\(unknownVersion) \(version), which this rtdb does not know (it reads versions 2 to \(FolderHead.version)); a newer rtdb wrote it", 8)
            }
            var fields: [Int] = []
            for i in 0..<4 {
                let v = LittleEndian.read(UInt64.self, from: raw, at: 12 + 8 * i)
                guard v <= UInt64(Int.max) else { throw damaged("a length out of range", 12 + 8 * i) }
                fields.append(Int(v))
            }
            // Far beyond any real folder, and small enough that no sum with them overflows.
            guard fields.allSatisfy({ $0 < 1 << 56 }) else { throw damaged("a number out of range", 12) }
            let rootLength = Int(LittleEndian.read(UInt32.self, from: raw, at: 44))
            let rootEnd = 48 + rootLength
            guard version == 2 ? rootEnd == end : rootEnd + 4 <= end else { throw damaged("the root's length does not match the file", 44) }
            var head = FolderHead(nodesID: fields[0], nodesLength: fields[1], compactedLength: fields[2], covered: fields[3],
                                  root: Array(bytes[48..<rootEnd]))
            guard version > 2 else { return head }
            var at = rootEnd
            func u32() throws -> Int {
                guard end - at >= 4 else { throw damaged("the list of indexes runs past the end", at) }
                defer { at += 4 }
                return Int(LittleEndian.read(UInt32.self, from: raw, at: at))
            }
            func u64() throws -> Int {
                guard end - at >= 8 else { throw damaged("the list of indexes runs past the end", at) }
                let v = LittleEndian.read(UInt64.self, from: raw, at: at)
                guard v < 1 << 56 else { throw damaged("a number out of range", at) }
                at += 8
                return Int(v)
            }
            func text() throws -> String {
                let n = try u32()
                guard n <= end - at else { throw damaged("the list of indexes runs past the end", at) }
                defer { at += n }
                return String(decoding: raw[at..<(at + n)], as: UTF8.self)
            }
            let count = try u32()
            // Each takes at least 24 bytes: a hostile count cannot make a huge array.
            guard count <= (end - at) / 24 else { throw damaged("more indexes than the file holds", at - 4) }
            for _ in 0..<count {
                let location = try text(), ordering = try text()
                let offset = try u64(), size = try u64()
                head.indexes.append(IndexLink(path: Path(location), index: Index(name: ordering), offset: offset, size: size))
            }
            if version >= 4 {
                let start = at
                guard let receipts = WriteReceipts.decode(raw, at: &at, end: end) else { throw damaged("the table of applied writes does not read", start) }
                head.receipts = receipts
            }
            guard at == end else { throw damaged(version >= 4 ? "bytes after the table of applied writes" : "bytes after the list of indexes", at) }
            return head
        }
    }
}
