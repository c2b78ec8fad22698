#if canImport(Glibc)
import Glibc
#endif

/// Appends nodes to a node file (the format is described at `NodeFile`): what the file already
/// holds is referred to, never written again, so storing a tree after a few writes costs the
/// branches those writes copied, whatever the size of the tree.
///
/// Children are written before their parents, so every link points backwards. Nothing is
/// durable until `finish`, and nothing written after the length a folder's head records is
/// ever read: an interrupted append is harmless.
public final class NodeFileWriter {
    public let path: String
    public let id: Int
    private let fd: Int32
    /// Where this append started: subtrees of this file below it are kept as they are.
    private let start: Int
    private var flushed: Int
    private var buffer: [UInt8] = []
    /// Records written, for progress and tests.
    public private(set) var records = 0
    /// Leaves out the stand-ins of damaged records (see `NodeFile.standInKey`), rebuilding
    /// each list around them: for a salvaging copy.
    public var dropDamaged = false

    /// Opens `path` (file number `id`) to append after its first `length` bytes, cutting
    /// anything beyond (an append that never finished); a new file gets its header.
    public init(path: String, id: Int, appendingAt length: Int) throws {
        self.path = path
        self.id = id
        fd = Glibc.open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 { throw NodeFile.Failure.io(operation: "open", path: path, errno: errno) }
        if ftruncate(fd, off_t(length)) != 0 || lseek(fd, off_t(length), SEEK_SET) < 0 {
            let code = errno
            Glibc.close(fd)
            throw NodeFile.Failure.io(operation: "truncate", path: path, errno: code)
        }
        start = length
        flushed = length
        buffer.reserveCapacity(1 << 20)
        if length == 0 {
            buffer += NodeFile.magic
            LittleEndian.append(NodeFile.version, to: &buffer)
            LittleEndian.append(UInt32(0), to: &buffer)
        }
    }

    deinit { Glibc.close(fd) }

    /// The file's length once everything written so far is out.
    public var length: Int { flushed + buffer.count }

    /// Stores what `node`'s children need and returns the node's own encoding, which refers
    /// to them (the folder's head keeps the root's).
    public func store(_ node: Node) throws -> [UInt8] {
        var out: [UInt8] = []
        try encode(node, into: &out)
        return out
    }

    /// Writes what is buffered and makes the file durable; returns its length.
    public func finish() throws -> Int {
        try flush()
        if fdatasync(fd) != 0 { throw NodeFile.Failure.io(operation: "sync", path: path, errno: errno) }
        return flushed
    }

    // MARK: Encoding

    private func encode(_ node: Node, into out: inout [UInt8]) throws {
        var kind: UInt8 = 0
        var children = (link: (offset: 0, size: 0), prioritized: 0)
        switch node.content {
        case .empty: break
        case .leaf(let leaf): kind = leafKind(leaf)
        case .children(let map):
            children = try storeChildren(map)
            if children.link.size == 0 {
                out.append(0)  // every child was damaged: nothing is left
                return
            }
            kind = 5
        }
        out.append(kind | (node.priority == nil ? 0 : 0x10))
        if let priority = node.priority {
            out.append(leafKind(priority))
            appendLeafValue(priority, into: &out)
        }
        switch node.content {
        case .empty: break
        case .leaf(let leaf): appendLeafValue(leaf, into: &out)
        case .children:
            LittleEndian.append(UInt64(children.link.offset), to: &out)
            LittleEndian.append(UInt64(children.link.size), to: &out)
            LittleEndian.append(UInt64(children.prioritized), to: &out)
        }
    }

    /// Stores a node's children; returns the link to their tree and how many have a priority.
    private func storeChildren(_ map: ChildMap) throws -> (link: (offset: Int, size: Int), prioritized: Int) {
        if case .tree(let tree) = map.storage, !dropDamaged { return (try storeTree(tree), map.prioritizedCount) }
        if case .encoded(let encoded) = map.storage, !dropDamaged {
            // Read from the text one child at a time, as its branch is written: a list of a
            // million children is never held whole, read or encoded. (No child of a
            // document is empty or has a priority.)
            let link = try encoded.withEntries { next in
                try storeBalanced(0..<encoded.count) {
                    guard let entry = next() else {
                        // A document holds as many children as it counted: only a fault in
                        // its reading could end them early, and no tree is stored from that.
                        throw NodeFile.Failure.damaged(path: path, offset: length, reason: "a value ran out of children as it was stored")
                    }
                    var value: [UInt8] = []
                    try encode(entry.value, into: &value)
                    return (entry.key, value)
                }
            }
            return (link, 0)
        }
        // Packed children (never stored as they are), or a salvage: each child's value is
        // stored first, then a balanced tree of them. In a salvage, a value left empty (all of
        // its children were damaged) is left out too, as no record may hold an empty value.
        var kept: [ChildEntry] = []
        map.forEachEntry { if !dropDamaged || !$0.key.name.hasPrefix(NodeFile.standInPrefix) { kept.append($0) } }
        var encoded: [(key: ChildKey, value: [UInt8], prioritized: Bool)] = []
        for entry in kept {
            var value: [UInt8] = []
            try encode(entry.value, into: &value)
            if value != [0] { encoded.append((entry.key, value, entry.value.priority != nil)) }
        }
        var position = encoded.startIndex
        let link = try storeBalanced(encoded.indices) {
            defer { position += 1 }
            return (encoded[position].key, encoded[position].value)
        }
        return (link, encoded.reduce(0) { $0 + ($1.prioritized ? 1 : 0) })
    }

    /// A leaf's kind byte. A server value never reaches a store (the engine resolves them
    /// first); one that did would be stored as null rather than as something false.
    private func leafKind(_ leaf: LeafValue) -> UInt8 {
        switch leaf {
        case .bool(let b): return b ? 2 : 1
        case .number: return 3
        case .string: return 4
        case .serverValue: return 0
        }
    }

    private func appendLeafValue(_ leaf: LeafValue, into out: inout [UInt8]) {
        switch leaf {
        case .number(let n): LittleEndian.append(n.bitPattern, to: &out)
        case .string(let s):
            let utf8 = s.utf8
            LittleEndian.append(UInt32(truncatingIfNeeded: utf8.count), to: &out)
            out += utf8
        case .bool, .serverValue: break
        }
    }

    /// Writes the branches of `tree` the file does not hold yet; returns the link to its top.
    private func storeTree(_ tree: WeightBalancedTree<ChildEntry>) throws -> (offset: Int, size: Int) {
        if tree.isEmpty { return (0, 0) }
        // Only this very file: a value read from another database's file is copied.
        if let stored = tree.storedRoot, let file = stored.loader as? NodeFile, file.id == id, file.path == path, stored.offset < start {
            return (stored.offset, tree.count)
        }
        guard let top = tree.top else { return (0, 0) }
        if top.element.key.name.hasPrefix(NodeFile.standInPrefix) && !dropDamaged {
            // Storing a stand-in would make damage look like data, and lose the children its
            // parent still counts: the file stays as it is for `--recover`.
            let at = Int(top.element.key.name.dropFirst(NodeFile.standInPrefix.count)) ?? 0
            throw NodeFile.Failure.damaged(path: path, offset: at, reason: "the tree holds \"\(top.element.key.name)\", a branch that could not be read; run --recover")
        }
        let left = try storeTree(top.left)
        let right = try storeTree(top.right)
        var value: [UInt8] = []
        try encode(top.element.value, into: &value)
        return try storeBranch(top.element.key, value, left: left, right: right)
    }

    /// Stores a query index: the branches of `entries` the file does not hold yet; returns
    /// the link to its top, which the folder's head keeps. An index holding a branch that
    /// could not be read is refused (`NodeFile.Failure.damaged`): it is built again instead.
    public func storeIndex(_ entries: WeightBalancedTree<IndexEntry>) throws -> (offset: Int, size: Int) {
        if entries.isEmpty { return (0, 0) }
        if let stored = entries.storedRoot, let branches = stored.loader as? StoredIndexBranches,
           branches.file.id == id, branches.file.path == path, stored.offset < start {
            return (stored.offset, entries.count)
        }
        guard let top = entries.top else { return (0, 0) }
        if top.element.key.name.hasPrefix(NodeFile.standInPrefix) {
            throw NodeFile.Failure.damaged(path: path, offset: 0, reason: "a query index holds \"\(top.element.key.name)\", a branch that could not be read")
        }
        let left = try storeIndex(top.left)
        let right = try storeIndex(top.right)
        var value: [UInt8] = []
        switch top.element.value.content {
        case .empty: value.append(0)
        case .children: value.append(NodeFile.objectKind)  // objects tie: that it is one is enough
        case .leaf(let leaf):
            value.append(leafKind(leaf))
            appendLeafValue(leaf, into: &value)
        }
        return try storeBranch(top.element.key, value, left: left, right: right)
    }

    /// Writes as a balanced tree the entries at `positions`, which `next` gives in key order,
    /// each value encoded: read in one pass, though each branch is written after both its
    /// subtrees (links point backwards), so only the entries on the path wait.
    private func storeBalanced(_ positions: Range<Int>, _ next: () throws -> (key: ChildKey, value: [UInt8])) throws -> (offset: Int, size: Int) {
        if positions.isEmpty { return (0, 0) }
        let mid = positions.lowerBound + positions.count / 2
        let left = try storeBalanced(positions.lowerBound..<mid, next)
        let (key, value) = try next()
        let right = try storeBalanced((mid + 1)..<positions.upperBound, next)
        return try storeBranch(key, value, left: left, right: right)
    }

    /// Writes one branch whose value is encoded and whose subtrees are stored; returns the link to it.
    private func storeBranch(_ key: ChildKey, _ value: [UInt8], left: (offset: Int, size: Int), right: (offset: Int, size: Int)) throws -> (offset: Int, size: Int) {
        var payload: [UInt8] = []
        let name = key.name.utf8
        LittleEndian.append(UInt32(truncatingIfNeeded: name.count), to: &payload)
        payload += name
        payload += value
        for link in [left, right] {
            LittleEndian.append(UInt64(link.offset), to: &payload)
            LittleEndian.append(UInt64(link.size), to: &payload)
        }
        let offset = length
        LittleEndian.append(UInt32(truncatingIfNeeded: payload.count), to: &buffer)
        LittleEndian.append(payload.withUnsafeBytes { CRC32.checksum($0) }, to: &buffer)
        buffer += payload
        records += 1
        if buffer.count >= 1 << 20 { try flush() }
        return (offset, left.size + right.size + 1)
    }

    private func flush() throws {
        var done = 0
        while done < buffer.count {
            let n = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw NodeFile.Failure.io(operation: "write", path: path, errno: errno)
            }
            done += n
        }
        flushed += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }
}
