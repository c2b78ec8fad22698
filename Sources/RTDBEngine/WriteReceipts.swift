import RTDBData
import RTDBProtocol

/// The writes applied for each client that names them (`WriteOrigin`): a write sent again
/// after a lost answer (a dropped connection, a new owner of a shared folder) is answered,
/// not applied twice. Each log record carries its origin, and each checkpoint's head the
/// table, so a new process opening the folder knows what its predecessor applied.
///
/// For each client, only the requests at or above its last floor are kept (the client
/// says it will never send those below again), as ranges: a client's writes are applied
/// in the order it sent them, so they form one range unless a write was refused. The
/// clients heard from least recently are forgotten beyond `clientLimit`.
struct WriteReceipts: Equatable {
    struct Client {
        var floor: Int
        /// Applied request numbers, sorted, disjoint and not adjacent.
        var applied: [ClosedRange<Int>]
        /// When the client last wrote, in this table's count of writes.
        var lastUse: Int
    }

    private(set) var clients: [String: Client] = [:]
    private var uses = 0
    /// A client comes back after a lost connection at once, and a shared folder's writers
    /// within a second of its owner's exit: the last thousand cover every live one.
    static let clientLimit = 1000

    var isEmpty: Bool { clients.isEmpty }

    /// The same writes remembered for the same clients (how recently each was heard from
    /// aside: the file keeps only their order).
    static func == (a: WriteReceipts, b: WriteReceipts) -> Bool {
        a.clients.count == b.clients.count && a.clients.allSatisfy { name, entry in
            b.clients[name].map { $0.floor == entry.floor && $0.applied == entry.applied } ?? false
        }
    }

    /// Whether the write `request` of `client` has been applied.
    func contains(_ client: String, _ request: Int) -> Bool {
        guard let entry = clients[client], request >= entry.floor else { return false }
        return entry.applied.contains { $0.contains(request) }
    }

    /// Forgets the requests below the origin's floor (answered, never sent again).
    mutating func advance(to origin: WriteOrigin) {
        guard var entry = clients[origin.client], origin.floor > entry.floor else { return }
        entry.floor = origin.floor
        entry.applied.removeAll { $0.upperBound < origin.floor }
        if let first = entry.applied.first, first.lowerBound < origin.floor { entry.applied[0] = origin.floor...first.upperBound }
        // Nothing left to recognise: nothing is kept.
        clients[origin.client] = entry.applied.isEmpty ? nil : entry
    }

    /// Notes that the write `request` from `origin` was applied.
    mutating func record(_ origin: WriteOrigin, request: Int) {
        advance(to: origin)
        uses += 1
        guard request >= origin.floor else { return }  // a client that breaks its word: nothing to keep
        var entry = clients[origin.client] ?? Client(floor: origin.floor, applied: [], lastUse: uses)
        entry.lastUse = uses
        entry.applied = WriteReceipts.inserting(request, into: entry.applied)
        if clients[origin.client] == nil && clients.count >= WriteReceipts.clientLimit, let oldest = clients.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            clients[oldest.key] = nil
        }
        clients[origin.client] = entry
    }

    /// Forgets that the write `request` of `client` was applied (it was taken back).
    mutating func remove(_ client: String, _ request: Int) {
        guard var entry = clients[client], let i = entry.applied.firstIndex(where: { $0.contains(request) }) else { return }
        let range = entry.applied[i]
        var pieces: [ClosedRange<Int>] = []
        if range.lowerBound < request { pieces.append(range.lowerBound...(request - 1)) }
        if request < range.upperBound { pieces.append((request + 1)...range.upperBound) }
        entry.applied.replaceSubrange(i...i, with: pieces)
        clients[client] = entry.applied.isEmpty ? nil : entry
    }

    private static func inserting(_ n: Int, into ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        var ranges = ranges
        // Almost always at the end: writes are applied in the order sent.
        if let last = ranges.last, n > last.upperBound {
            if n == last.upperBound + 1 { ranges[ranges.count - 1] = last.lowerBound...n } else { ranges.append(n...n) }
            return ranges
        }
        if ranges.contains(where: { $0.contains(n) }) { return ranges }
        let at = ranges.firstIndex { $0.lowerBound > n } ?? ranges.count
        ranges.insert(n...n, at: at)
        // Joins it with its neighbours where they now touch.
        var joined: [ClosedRange<Int>] = []
        for range in ranges {
            if let last = joined.last, last.upperBound + 1 >= range.lowerBound {
                joined[joined.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                joined.append(range)
            }
        }
        return joined
    }

    // MARK: On disk

    /// Little-endian: the number of clients u32, then for each, least recently heard from
    /// first, its name (u32 length, UTF-8), its floor u64, its number of ranges u32 and each
    /// range's first and last request u64.
    func encode(into out: inout [UInt8]) {
        let ordered = clients.sorted { $0.value.lastUse < $1.value.lastUse }
        LittleEndian.append(UInt32(truncatingIfNeeded: ordered.count), to: &out)
        for (name, entry) in ordered {
            LittleEndian.append(UInt32(truncatingIfNeeded: name.utf8.count), to: &out)
            out += name.utf8
            LittleEndian.append(UInt64(entry.floor), to: &out)
            LittleEndian.append(UInt32(truncatingIfNeeded: entry.applied.count), to: &out)
            for range in entry.applied {
                LittleEndian.append(UInt64(range.lowerBound), to: &out)
                LittleEndian.append(UInt64(range.upperBound), to: &out)
            }
        }
    }

    /// Reads a table `encode` wrote from `bytes[at..<end]`, moving `at` past it; nil when the
    /// bytes are not one (the caller says where).
    static func decode(_ bytes: UnsafeRawBufferPointer, at: inout Int, end: Int) -> WriteReceipts? {
        func u32() -> Int? {
            guard end - at >= 4 else { return nil }
            defer { at += 4 }
            return Int(LittleEndian.read(UInt32.self, from: bytes, at: at))
        }
        func u64() -> Int? {
            guard end - at >= 8 else { return nil }
            let v = LittleEndian.read(UInt64.self, from: bytes, at: at)
            guard v < 1 << 62 else { return nil }
            at += 8
            return Int(v)
        }
        guard let count = u32(), count <= (end - at) / 16 else { return nil }
        var table = WriteReceipts()
        for _ in 0..<count {
            guard let length = u32(), length >= 1, length <= WriteOrigin.maximumClientLength, length <= end - at else { return nil }
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at..<(at + length)]), as: UTF8.self)
            at += length
            guard let floor = u64(), let ranges = u32(), ranges >= 1, ranges <= (end - at) / 16 else { return nil }
            var applied: [ClosedRange<Int>] = []
            for _ in 0..<ranges {
                guard let low = u64(), let high = u64(), low >= floor, low <= high, low > (applied.last?.upperBound ?? -2) + 1 else { return nil }
                applied.append(low...high)
            }
            table.uses += 1
            table.clients[name] = Client(floor: floor, applied: applied, lastUse: table.uses)
        }
        return table
    }
}
