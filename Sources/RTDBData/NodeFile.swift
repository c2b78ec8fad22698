import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A file of stored nodes, mapped read-only: a tree opened from it reads only the branches a
/// lookup or a walk visits, so opening costs the same for a kilobyte or a gigabyte.
///
/// The file is append-only. It starts with a 16-byte header (`RTDBNODE`, the format version as
/// a little-endian u32, four zero bytes); records follow, each `[length u32][crc32 u32]
/// [payload]`, and each is one branch of a node's children (`WeightBalancedTree`):
///
///     payload  = key(u32 length, UTF-8) node left right
///     left, right = offset u64, size u64   (offset 0: none)
///     node     = tag u8 [priority] content
///     tag      = kind (0 empty, 1 false, 2 true, 3 number, 4 string, 5 children) | 0x10 with a priority
///     priority = tag u8 (3 or 4) and its value
///     number   = IEEE double, 8 bytes; string = u32 length, UTF-8
///     children = root offset u64, count u64, count of children with a priority u64
///
/// A query index (`NodeFile.storedIndex`, linked from the folder's head) is a tree of the same
/// records whose node is the child's ordering value: kind 0–4 as above with no priority, or
/// 6 for an object (objects tie in value order, so which one is not kept).
///
/// Every offset a record holds is smaller than the record's own: a writer stores children
/// before their parents (`NodeFileWriter`), and a reader refuses anything else, so damaged or
/// hostile bytes cannot make a walk loop, and a branch must be balanced, so a list's depth
/// stays logarithmic. A record that fails its checksum, its bounds or its balance reads as a
/// stand-in child named after its offset (see `standIn`), reported once through `onDamage`.
/// Known limit: a hand-made file can still nest values far deeper than a write could, or
/// share one subtree from many places, making a full walk deep or long (never endless).
///
/// `@unchecked Sendable`: `base` is a read-only mapping, which no thread changes.
public final class NodeFile: BranchLoader, @unchecked Sendable {
    public static let magic: [UInt8] = Array("RTDBNODE".utf8)
    public static let version: UInt32 = 1
    public static let headerSize = 16
    /// A record's smallest size: header 8, key length 4, a one-byte key, a one-byte node
    /// (true or false), two links of 16.
    static let smallestRecord = 46

    /// Why a node file could not be opened.
    public enum Failure: Error, CustomStringConvertible {
        case io(operation: String, path: String, errno: Int32)
        case damaged(path: String, offset: Int, reason: String)

        public var description: String {
            switch self {
            case let .io(operation, path, code): return "cannot \(operation) \(path): \(String(cString: strerror(code)))"
            case let .damaged(path, offset, reason): return "\(path) is damaged at byte \(offset): \(reason)"
            }
        }
    }

    public let path: String
    /// The file's number in its folder: a writer appending to the same number keeps what the
    /// file already holds.
    public let id: Int
    /// The bytes this mapping covers (what the folder's head says is whole).
    public let length: Int
    private let base: UnsafeRawPointer

    /// The damaged records reported so far.
    private let damaged = Mutex(Set<Int>())
    /// Told once for each damaged record found (the engine logs it).
    public let onDamage: @Sendable (String) -> Void

    /// Maps the first `length` bytes of `path` and checks the header.
    public init(path: String, id: Int, length: Int, onDamage: @escaping @Sendable (String) -> Void = { _ in }) throws {
        self.path = path
        self.id = id
        self.length = length
        self.onDamage = onDamage
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw Failure.io(operation: "open", path: path, errno: errno) }
        defer { Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Failure.io(operation: "stat", path: path, errno: errno) }
        guard length >= NodeFile.headerSize, Int(st.st_size) >= length else {
            throw Failure.damaged(path: path, offset: Int(st.st_size), reason: "the file is shorter (\(st.st_size) bytes) than the \(length) bytes its folder's head says it holds")
        }
        guard let mapped = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            throw Failure.io(operation: "map", path: path, errno: errno)
        }
        base = UnsafeRawPointer(mapped)
        let header = UnsafeRawBufferPointer(start: base, count: NodeFile.headerSize)
        guard header.prefix(8).elementsEqual(NodeFile.magic) else {
            munmap(UnsafeMutableRawPointer(mutating: base), length)
            throw Failure.damaged(path: path, offset: 0, reason: "not a node file (its header is not RTDBNODE)")
        }
        var versionReader = Reader(bytes: header, at: 8)
        let version = versionReader.u32() ?? 0
        guard version == NodeFile.version else {
            munmap(UnsafeMutableRawPointer(mutating: base), length)
            throw Failure.damaged(path: path, offset: 8, reason: "format version \(version), which this rtdb does not know (it reads version \(NodeFile.version)); a newer rtdb wrote it")
        }
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), length) }

    private var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: length) }

    /// Reads a node encoded outside the file (the folder's head holds the root's), whose
    /// children may be anywhere in the file. Nil when the bytes are not a node.
    public func node(encoded: [UInt8]) -> Node? {
        encoded.withUnsafeBytes { raw in
            var reader = Reader(bytes: raw, at: 0)
            guard let node = decodeNode(&reader, below: length), reader.offset == raw.count else { return nil }
            return node
        }
    }

    // MARK: Branches

    typealias Element = ChildEntry

    /// The same file (a new mapping after each checkpoint is the same storage).
    func sameStorage(as other: any BranchLoader<ChildEntry>) -> Bool {
        guard let other = other as? NodeFile else { return false }
        return other === self || (other.id == id && other.path == path)
    }

    func loadBranch(at offset: Int, size: Int) -> WeightBalancedTree<ChildEntry>.Branch {
        let read = readBranch(at: offset, size: size, loader: self) { key, reader in
            guard let value = decodeNode(&reader, below: offset), !value.isEmpty else { return nil }
            return ChildEntry(key: key, value: value)
        }
        switch read {
        case .success(let branch): return branch
        case .failure(let damage): return standIn(at: offset, reason: damage.reason)
        }
    }

    struct Damage: Error { let reason: String }

    /// Reads the record at `offset`, the top of a stored subtree of `size` elements: its
    /// element (the key, then what `element` reads; nil when that cannot be read) and links
    /// to its two subtrees, which `loader` reads when they are visited.
    func readBranch<Element>(at offset: Int, size: Int, loader: any BranchLoader<Element>,
                             element: (ChildKey, inout Reader) -> Element?) -> Result<WeightBalancedTree<Element>.Branch, Damage> {
        let all = bytes
        var header = Reader(bytes: all, at: offset)
        guard offset >= NodeFile.headerSize, let lengthField = header.u32(), let crc = header.u32() else {
            return .failure(Damage(reason: "a record outside the file"))
        }
        let length = Int(lengthField)
        guard length <= all.count - header.offset else { return .failure(Damage(reason: "a record that runs past the end of the file")) }
        let payload = UnsafeRawBufferPointer(rebasing: all[header.offset..<(header.offset + length)])
        guard CRC32.checksum(payload) == crc else { return .failure(Damage(reason: "checksum mismatch")) }
        var reader = Reader(bytes: payload, at: 0)
        guard let key = reader.string(), !key.isEmpty else { return .failure(Damage(reason: "a child with no key")) }
        guard let value = element(ChildKey(key), &reader) else { return .failure(Damage(reason: "a child whose value cannot be read")) }
        guard let left = reader.subtreeRef(below: offset), let right = reader.subtreeRef(below: offset), reader.offset == payload.count else {
            return .failure(Damage(reason: "bad links to the branches below"))
        }
        guard left.size + right.size + 1 == size else {
            return .failure(Damage(reason: "the branch holds \(left.size + right.size + 1) children where its parent says \(size)"))
        }
        // Balanced as every writer leaves it, so a walk's depth stays logarithmic.
        guard left.size + right.size <= 1 || (left.size <= 3 * right.size && right.size <= 3 * left.size) else {
            return .failure(Damage(reason: "an unbalanced branch (\(left.size) children on one side, \(right.size) on the other)"))
        }
        func subtree(_ ref: (offset: Int, size: Int)) -> WeightBalancedTree<Element>.Subtree? {
            ref.size == 0 ? nil : WeightBalancedTree<Element>.StoredSubtree(loader: loader, offset: ref.offset, size: ref.size)
        }
        return .success(WeightBalancedTree<Element>.Branch(value, subtree(left), subtree(right)))
    }

    // MARK: Query indexes

    /// The query index whose top record is at `offset` and which holds `size` entries (a
    /// link the folder's head keeps), read as it is walked; nil when no such link can point
    /// into this file. Its entries' values are ordering values: a leaf, null, or an object
    /// (read as `IndexEntry.anObject`).
    public func storedIndex(offset: Int, size: Int) -> (entries: WeightBalancedTree<IndexEntry>, branches: StoredIndexBranches)? {
        guard size > 0, Reader.isLink(offset: offset, size: size, below: length) else { return nil }
        let branches = StoredIndexBranches(file: self)
        return (WeightBalancedTree(loader: branches, offset: offset, size: size), branches)
    }

    /// One branch of a stored query index.
    func readIndexBranch(at offset: Int, size: Int, loader: StoredIndexBranches) -> Result<WeightBalancedTree<IndexEntry>.Branch, Damage> {
        readBranch(at: offset, size: size, loader: loader) { key, reader in
            guard let kind = reader.u8() else { return nil }
            switch kind {
            case 0: return IndexEntry(value: .empty, key: key)
            case NodeFile.objectKind: return IndexEntry(value: IndexEntry.anObject, key: key)
            case 1...4: return decodeLeaf(kind, &reader).map { IndexEntry(value: Node($0), key: key) }
            default: return nil
            }
        }
    }

    /// The kind byte of an index entry whose value is an object.
    static let objectKind: UInt8 = 6

    /// The child a damaged record reads as: its key says where the damage is, so a user sees it
    /// and `--recover` can leave it out.
    private func standIn(at offset: Int, reason: String) -> WeightBalancedTree<ChildEntry>.Branch {
        let first = damaged.withLock { $0.insert(offset).inserted }
        if first { onDamage("\(path) is damaged at byte \(offset): \(reason); the children stored there read as \"\(NodeFile.standInKey(offset))\" ('rtdb --recover' leaves them out)") }
        return WeightBalancedTree<ChildEntry>.Branch(ChildEntry(key: ChildKey(NodeFile.standInKey(offset)), value: Node("unreadable")), nil, nil)
    }

    /// The key of a damaged record's stand-in (never a valid database key: it starts with a dot).
    public static func standInKey(_ offset: Int) -> String { standInPrefix + String(offset) }
    static let standInPrefix = ".damaged-"

    // MARK: Nodes

    func decodeNode(_ reader: inout Reader, below limit: Int) -> Node? {
        guard let tag = reader.u8() else { return nil }
        var priority: LeafValue?
        if tag & 0x10 != 0 {
            guard let kind = reader.u8(), let value = decodeLeaf(kind, &reader) else { return nil }
            switch value {
            case .number, .string: priority = value
            default: return nil
            }
        }
        switch tag & 0x0F {
        case 0: return priority == nil ? .empty : nil
        case 5:
            guard let root = reader.subtreeRef(below: limit), root.size > 0, let prioritized = reader.u64Int(), prioritized <= root.size else { return nil }
            let tree = WeightBalancedTree<ChildEntry>(loader: self, offset: root.offset, size: root.size)
            return Node(children: ChildMap(tree: tree, prioritizedCount: prioritized), priority: priority)
        case let kind:
            guard let leaf = decodeLeaf(kind, &reader) else { return nil }
            return Node(leaf, priority: priority)
        }
    }

    func decodeLeaf(_ kind: UInt8, _ reader: inout Reader) -> LeafValue? {
        switch kind {
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3:
            guard let bits = reader.u64() else { return nil }
            let number = Double(bitPattern: bits)
            return number.isFinite ? .number(number) : nil
        case 4: return reader.string().map { .string($0) }
        default: return nil
        }
    }

    /// Bounds-checked little-endian reads.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset: Int

        init(bytes: UnsafeRawBufferPointer, at offset: Int) {
            self.bytes = bytes
            self.offset = offset
        }

        mutating func u8() -> UInt8? {
            guard offset >= 0, offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func u32() -> UInt32? { integer() }
        mutating func u64() -> UInt64? { integer() }

        private mutating func integer<T: FixedWidthInteger>() -> T? {
            let size = MemoryLayout<T>.size
            guard offset >= 0, bytes.count - offset >= size else { return nil }
            defer { offset += size }
            return LittleEndian.read(T.self, from: bytes, at: offset)
        }

        /// A u64 that fits an Int.
        mutating func u64Int() -> Int? {
            guard let v = u64(), v <= UInt64(Int.max) else { return nil }
            return Int(v)
        }

        mutating func string() -> String? {
            guard let n = u32().map(Int.init), n <= bytes.count - offset else { return nil }
            defer { offset += n }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)]), as: UTF8.self)
        }

        /// A link to a stored subtree, which must lie before `limit` (or be none: offset 0,
        /// size 0) and claim no more branches than fit before its end, so a hostile size can
        /// neither overflow a sum nor send a walk through billions of missing children.
        mutating func subtreeRef(below limit: Int) -> (offset: Int, size: Int)? {
            guard let offset = u64Int(), let size = u64Int() else { return nil }
            if size == 0 { return offset == 0 ? (0, 0) : nil }
            return Reader.isLink(offset: offset, size: size, below: limit) ? (offset, size) : nil
        }

        static func isLink(offset: Int, size: Int, below limit: Int) -> Bool {
            offset >= NodeFile.headerSize && offset < limit && size <= (offset - NodeFile.headerSize) / NodeFile.smallestRecord + 1
        }
    }
}
