import RTDBData

/// The data folder's `HEAD`: which node file holds the tree, how much of it is whole, and
/// which logs that tree already contains. It is replaced whole (a temporary file renamed over
/// it) after the node file is durable, so it always names a complete tree.
///
/// On disk, little-endian: `RTDBHEAD`, format version u32, node file number u64, its length
/// u64, its length after its last full copy u64, the last log it covers u64, the root node's
/// encoding (u32 length, bytes; see `NodeFile`), and a CRC-32 of everything before it.
struct FolderHead: Equatable {
    static let magic: [UInt8] = Array("RTDBHEAD".utf8)
    /// Format 1 was a JSON snapshot (`snapshot-N.json`) and no head; an open converts it.
    static let version: UInt32 = 2

    var nodesID: Int
    var nodesLength: Int
    /// The node file's length when it was last written whole: what it grew by since is
    /// (mostly) branches later checkpoints replaced, so a full copy is due when it doubles.
    var compactedLength: Int
    /// Logs up to this number are in the tree.
    var covered: Int
    var root: [UInt8]

    func encode() -> [UInt8] {
        var out = FolderHead.magic
        LittleEndian.append(FolderHead.version, to: &out)
        for v in [nodesID, nodesLength, compactedLength, covered] { LittleEndian.append(UInt64(v), to: &out) }
        LittleEndian.append(UInt32(truncatingIfNeeded: root.count), to: &out)
        out += root
        LittleEndian.append(CRC32.checksum(out), to: &out)
        return out
    }

    static func decode(_ bytes: [UInt8], path: String) throws -> FolderHead {
        func damaged(_ reason: String, _ offset: Int) -> StoreError { .corrupt(file: path, offset: offset, reason: reason) }
        guard bytes.count >= 8 + 4 + 32 + 4 + 4, bytes.prefix(8).elementsEqual(magic) else { throw damaged("not an rtdb head file", 0) }
        let crc = bytes.withUnsafeBytes { LittleEndian.read(UInt32.self, from: $0, at: bytes.count - 4) }
        guard bytes.withUnsafeBytes({ CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[..<(bytes.count - 4)])) }) == crc else {
            throw damaged("checksum mismatch", bytes.count - 4)
        }
        return try bytes.withUnsafeBytes { raw in
            let version = LittleEndian.read(UInt32.self, from: raw, at: 8)
            guard version == FolderHead.version else {
                throw damaged("format version \(version), which this rtdb does not know (it reads version \(FolderHead.version)); a newer rtdb wrote it", 8)
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
            guard rootLength == bytes.count - 52 else { throw damaged("the root's length does not match the file", 44) }
            return FolderHead(nodesID: fields[0], nodesLength: fields[1], compactedLength: fields[2], covered: fields[3],
                              root: Array(bytes[48..<(48 + rootLength)]))
        }
    }
}
