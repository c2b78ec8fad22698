import RTDBData
import RTDBProtocol

/// One atomic write in the log: the sets it made, at absolute paths, with resolved values,
/// and who sent it when the client named itself (see `WriteReceipts`).
///
/// On disk: `[length u32][crc32 u32][payload]`, little-endian; the payload is a count and, per
/// set, the path and the value's export JSON, each length-prefixed; then, for a write with an
/// origin, the client's name (length-prefixed), its request number u64 and its floor u64
/// (an rtdb that does not know them reads the sets and skips the rest). A restore of a
/// snapshot has the count's top bit set (count 1) and the snapshot's number u64 in place of
/// its set; an rtdb older than snapshots reads it as damage, so a folder is not taken back to
/// one while a log holds a restore (a checkpoint ends that). A record whose length or
/// checksum does not match was torn by a crash and was never acknowledged.
struct LogRecord: Equatable {
    var sets: [(path: Path, value: Node)]
    var origin: WriteOrigin?
    /// The origin's request number for this write.
    var request = 0
    /// A restore of the snapshot of this number (`SnapshotFile`): its one set is the whole
    /// tree, which the log holds as the number, not as the tree (a restore costs the same
    /// for any size). A record read back has no set until its snapshot is opened (`Store.replay`).
    var restoring: Int?

    init(sets: [(path: Path, value: Node)], origin: WriteOrigin? = nil, request: Int = 0, restoring: Int? = nil) {
        self.sets = sets
        self.origin = origin
        self.request = request
        self.restoring = restoring
    }

    static func == (a: LogRecord, b: LogRecord) -> Bool {
        a.sets.count == b.sets.count && zip(a.sets, b.sets).allSatisfy { $0.path == $1.path && $0.value == $1.value }
            && a.origin == b.origin && a.request == b.request && a.restoring == b.restoring
    }

    /// The set count's top bit marks a restore; the snapshot's number follows it (u64).
    static let restoreFlag: UInt32 = 1 << 31

    static let headerSize = 8
    static let minimumPayload = 12

    /// The form values are written in: the export form, with documents' text as it came
    /// (it reads back as the same value, and is copied rather than written again).
    static let valueForm: JSONWriter.Options = {
        var options = JSONWriter.Options(export: true)
        options.textAsRead = true
        return options
    }()

    /// Records holding at least this much of documents' text are written in pieces (`write`).
    static let writtenInPiecesFrom = 1 << 20

    /// Whether the record is written in pieces rather than encoded into a buffer: a value
    /// still a big document's text would then be held twice, as text and as the record.
    var isLarge: Bool {
        restoring == nil && sets.reduce(0) { $0 + $1.value.textCount } >= LogRecord.writtenInPiecesFrom
    }

    func encode(into out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: [UInt8](repeating: 0, count: LogRecord.headerSize))
        layOut(&out) { value, out in
            let lengthAt = out.count
            LittleEndian.append(UInt32(0), to: &out)
            JSONWriter.write(value, to: &out, options: LogRecord.valueForm)
            LittleEndian.write(UInt32(out.count - lengthAt - 4), at: lengthAt, in: &out)
        }
        let payloadLength = out.count - start - LogRecord.headerSize
        let crc = out.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[(start + LogRecord.headerSize)...])) }
        LittleEndian.write(UInt32(payloadLength), at: start, in: &out)
        LittleEndian.write(crc, at: start + 4, in: &out)
    }

    /// The payload's layout, in one place for `encode` and `write`: appends its fields to
    /// `out`, and has `value` append each set's value, with its length first.
    private func layOut(_ out: inout [UInt8], value: (Node, inout [UInt8]) -> Void) {
        if let restoring {
            LittleEndian.append(LogRecord.restoreFlag | 1, to: &out)
            LittleEndian.append(UInt64(restoring), to: &out)
        } else {
            LittleEndian.append(UInt32(sets.count), to: &out)
        }
        for (path, node) in sets where restoring == nil {
            let p = Array(path.wireString.utf8)
            LittleEndian.append(UInt32(p.count), to: &out)
            out.append(contentsOf: p)
            value(node, &out)
        }
        if let origin {
            LittleEndian.append(UInt32(origin.client.utf8.count), to: &out)
            out += origin.client.utf8
            LittleEndian.append(UInt64(request), to: &out)
            LittleEndian.append(UInt64(origin.floor), to: &out)
        }
    }

    /// Writes the record through `sink` in pieces of about `LogRecord.piece` bytes, the same
    /// bytes `encode` makes; returns how many. The header needs the payload's length and
    /// checksum, so the values are written three times: to count each, to checksum them all,
    /// and to `sink`. None is ever whole in memory. After a failure of `sink` the rest is
    /// still generated, unsent: this happens once, on a full or failing disk, and stopping
    /// the writer early would cost a check in its inner loop on every write.
    func write(_ sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        let lengths = sets.map { set in
            var count = 0
            LogRecord.pieces(of: set.value) { count += $0.count }
            return count
        }
        var crc: UInt32 = 0
        var payloadLength = 0
        payload(lengths) { piece in
            crc = CRC32.checksum(piece, continuing: crc)
            payloadLength += piece.count
        }
        var header: [UInt8] = []
        LittleEndian.append(UInt32(payloadLength), to: &header)
        LittleEndian.append(crc, to: &header)
        try header.withUnsafeBytes { try sink($0) }
        var failure: Error?
        payload(lengths) { piece in
            guard failure == nil else { return }
            do { try sink(piece) } catch { failure = error }
        }
        if let failure { throw failure }
        return header.count + payloadLength
    }

    static let piece = 1 << 16

    /// The payload `encode` writes, in pieces, given each value's length.
    private func payload(_ lengths: [Int], _ emit: (UnsafeRawBufferPointer) -> Void) {
        var out: [UInt8] = []
        var next = lengths.makeIterator()
        layOut(&out) { value, out in
            LittleEndian.append(UInt32(next.next() ?? 0), to: &out)
            out.withUnsafeBytes { emit($0) }
            out.removeAll(keepingCapacity: true)
            LogRecord.pieces(of: value, emit)
        }
        out.withUnsafeBytes { emit($0) }
    }

    /// A value's text, in pieces.
    private static func pieces(of value: Node, _ emit: (UnsafeRawBufferPointer) -> Void) {
        withoutActuallyEscaping(emit) { emit in
            var out: [UInt8] = []
            JSONWriter.write(value, to: &out, options: LogRecord.valueForm, draining: LogRecord.piece) { written in
                written.withUnsafeBytes { emit($0) }
                written.removeAll(keepingCapacity: true)
            }
            out.withUnsafeBytes { emit($0) }
        }
    }

    enum DecodeResult {
        case record(LogRecord, next: Int)
        case end
        /// Not a whole record: a write cut short, or damage to its header or bytes.
        case torn(reason: String)
        /// A whole record (its checksum matches) that cannot be read: it was written so,
        /// never cut short. `next` is where the record after it starts.
        case unreadable(reason: String, next: Int)
    }

    /// Reads the record at `offset`, or says why the bytes there are not a whole record.
    static func decode(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> DecodeResult {
        if offset == bytes.count { return .end }
        guard offset + headerSize <= bytes.count else { return .torn(reason: "incomplete record header") }
        let length = Int(LittleEndian.read(UInt32.self, from: bytes, at: offset))
        let crc = LittleEndian.read(UInt32.self, from: bytes, at: offset + 4)
        let start = offset + headerSize
        guard length <= bytes.count - start else { return .torn(reason: "record runs past the end of the file") }
        // The smallest record holds a count and one set's two lengths; less (zeros written
        // ahead of the data, as a crash can leave) is no record at all.
        guard length >= minimumPayload else { return .torn(reason: "no record here") }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)])
        guard CRC32.checksum(payload) == crc else { return .torn(reason: "checksum mismatch") }
        var i = 0
        func take32() -> Int? {
            guard i + 4 <= payload.count else { return nil }
            defer { i += 4 }
            return Int(LittleEndian.read(UInt32.self, from: payload, at: i))
        }
        let next = start + length
        guard let count = take32(), count > 0 else { return .unreadable(reason: "a record with no write", next: next) }
        var restoring: Int?
        if UInt32(count) & restoreFlag != 0 {
            guard UInt32(count) == restoreFlag | 1, i + 8 <= payload.count else { return .unreadable(reason: "a bad restore", next: next) }
            let id = LittleEndian.read(UInt64.self, from: payload, at: i)
            i += 8
            guard id > 0, id < 1 << 62 else { return .unreadable(reason: "a bad restore", next: next) }
            restoring = Int(id)
        }
        var sets: [(Path, Node)] = []
        for _ in 0..<(restoring == nil ? count : 0) {
            guard let pl = take32(), i + pl <= payload.count else { return .unreadable(reason: "bad path length", next: next) }
            let path = Path(String(decoding: UnsafeRawBufferPointer(rebasing: payload[i..<(i + pl)]), as: UTF8.self))
            i += pl
            guard let vl = take32(), i + vl <= payload.count else { return .unreadable(reason: "bad value length", next: next) }
            let slice = UnsafeRawBufferPointer(rebasing: payload[i..<(i + vl)])
            i += vl
            let value: Node
            do {
                value = try JSONReader.parse(bytes: slice.bindMemory(to: UInt8.self), options: .init(base: path, allowServerValues: false))
            } catch {
                return .unreadable(reason: "a value that is not valid JSON (\(error))", next: next)
            }
            sets.append((path, value))
        }
        guard i < payload.count else { return .record(LogRecord(sets: sets, restoring: restoring), next: next) }
        guard let cl = take32(), cl >= 1, cl <= WriteOrigin.maximumClientLength, payload.count - i == cl + 16 else {
            return .unreadable(reason: "bad origin", next: next)
        }
        let client = String(decoding: UnsafeRawBufferPointer(rebasing: payload[i..<(i + cl)]), as: UTF8.self)
        let request = LittleEndian.read(UInt64.self, from: payload, at: i + cl)
        let floor = LittleEndian.read(UInt64.self, from: payload, at: i + cl + 8)
        guard request < 1 << 62, floor < 1 << 62 else { return .unreadable(reason: "bad origin", next: next) }
        return .record(LogRecord(sets: sets, origin: WriteOrigin(client: client, floor: Int(floor)), request: Int(request), restoring: restoring), next: next)
    }

    /// The offset of the first whole, readable record after `offset`, if any: how recovery
    /// tells damage (good records follow) from a write cut short at the end.
    static func nextRecord(_ bytes: UnsafeRawBufferPointer, after offset: Int) -> Int? {
        var candidate = offset + 1
        while candidate + headerSize <= bytes.count {
            let length = Int(LittleEndian.read(UInt32.self, from: bytes, at: candidate))
            // A record holds at least its count and one set (two lengths).
            if length >= minimumPayload && length <= bytes.count - candidate - headerSize {
                switch decode(bytes, at: candidate) {
                case .record, .unreadable: return candidate  // whole records: what follows is not a torn tail
                default: break
                }
            }
            candidate += 1
        }
        return nil
    }

    func apply(to root: Node) -> Node {
        root.merging(sets)
    }

    /// Applies the record to `root` in place.
    func apply(to root: inout Node) {
        root.merge(sets)
    }
}
