import RTDBData

/// The server's data as the disk cache keeps it (`server_data`). Rows are keyed `/a/b/`
/// (root: `/`); a row holds the server's whole value at its path as it was written, and a
/// deeper row overrides what an ancestor row says below it. A large value with children is
/// kept as a row per child, so reading one child does not parse its siblings.
final class CachedServerData {
    private let storage: CacheStorage
    /// Bytes of data written since the cache policy last measured the size.
    var writtenSinceCheck = 0

    init(storage: CacheStorage) {
        self.storage = storage
    }

    static func rowKey(_ path: Path) -> String {
        path.isRoot ? "/" : "/" + path.keys.joined(separator: "/") + "/"
    }

    /// The bounds of the rows at or below `path`, for `path >= ? AND path < ?`: its key, and
    /// the first key after all of them (`/a/` is followed by `/a0`).
    static func rowRange(_ path: Path) -> [SQLiteDatabase.Value] {
        let key = rowKey(path)
        return [.text(key), .text(String(key.dropLast()) + "0")]
    }

    /// The size of the rows selected, as the limit counts it.
    static let rowBytes = "coalesce(sum(length(value) + length(path)), 0)"

    static func path(ofRowKey key: String) -> Path {
        Path(keys: key.split(separator: "/", omittingEmptySubsequences: true).map(String.init))
    }

    /// A value larger than this with children is kept as a row per child (recursively), so
    /// that reading one child does not parse all of its siblings (the official clients split
    /// at the same size).
    static let splitBytes = 16 * 1024

    /// Bytes of cached server data.
    var size: Int {
        var size = 0
        storage.attempt { size = Int(try storage.database.integer("SELECT \(Self.rowBytes) FROM server_data")) }
        return size
    }

    /// Forgets the rows selected by `rows` (an SQL condition on `path` with `range` as its
    /// arguments); returns their bytes. Inside a change.
    func forget(where rows: String, _ range: [SQLiteDatabase.Value]) throws -> Int {
        let bytes = Int(try storage.database.integer("SELECT \(Self.rowBytes) FROM server_data WHERE \(rows)", range))
        try storage.database.run("DELETE FROM server_data WHERE \(rows)", range)
        return bytes
    }

    /// Forgets every row. Inside a change.
    func forgetAll() throws {
        try storage.database.execute("DELETE FROM server_data;")
    }

    /// The server's value at `path` replaced by `node`.
    func overwrite(_ path: Path, _ node: Node) {
        storage.change {
            let key = Self.rowKey(path)
            try storage.database.run("DELETE FROM server_data WHERE path >= ? AND path < ?", Self.rowRange(path))
            if Self.splits(node) {
                // An empty row hides what an ancestor row says; the children's rows follow.
                if try hasRowAbove(path) { try insertRow(key, JSONWriter.bytes(.empty)) }
                try insertSplit(path, node)
                return
            }
            // An empty value needs a row only to hide what an ancestor row says.
            if node.isEmpty, try !hasRowAbove(path) { return }
            try insertRow(key, JSONWriter.bytes(node, options: JSONWriter.Options(export: true)))
        }
    }

    /// Whether `node` is kept as a row per child: it has children and no priority (a priority
    /// stays in its node's row, so that it goes when the node empties), and it is large.
    private static func splits(_ node: Node) -> Bool {
        guard node.priority == nil, !node.children.isEmpty else { return false }
        var budget = splitBytes
        return !fits(node, in: &budget)
    }

    /// Whether `node`'s JSON takes at most `budget` bytes (roughly: keys, strings and numbers);
    /// stops counting as soon as it does not, so a large value costs no more than the budget.
    private static func fits(_ node: Node, in budget: inout Int) -> Bool {
        switch node.content {
        case .empty: budget -= 4
        case .leaf(.string(let text)): budget -= text.utf8.count + 2
        case .leaf: budget -= 8
        case .children(let children):
            for entry in children {
                budget -= entry.key.name.utf8.count + 4
                if budget < 0 || !fits(entry.value, in: &budget) { return false }
            }
        }
        if node.priority != nil { budget -= 20 }
        return budget >= 0
    }

    /// The rows of a large `node` with children: one per child, split again when large too.
    private func insertSplit(_ path: Path, _ node: Node) throws {
        for entry in node.children {
            let childPath = path.child(entry.key.name)
            if Self.splits(entry.value) {
                try insertSplit(childPath, entry.value)
            } else {
                try insertRow(Self.rowKey(childPath), JSONWriter.bytes(entry.value, options: JSONWriter.Options(export: true)))
            }
        }
    }

    private func insertRow(_ key: String, _ bytes: [UInt8]) throws {
        writtenSinceCheck += bytes.count
        try storage.database.run("INSERT INTO server_data (path, value) VALUES (?, ?)", [.text(key), .blob(bytes)])
    }

    private func hasRowAbove(_ path: Path) throws -> Bool {
        var prefix = Path()
        for key in path.keys {
            if try storage.database.integer("SELECT count(*) FROM server_data WHERE path = ?", [.text(Self.rowKey(prefix))]) > 0 { return true }
            prefix = prefix.child(key)
        }
        return false
    }

    /// The server's data at `path` as cached (empty where nothing is known).
    func node(at path: Path) -> Node {
        var node = Node.empty
        storage.attempt {
            // The deepest ancestor row is the base; rows below it (in key order, parents first) override.
            var prefix = Path()
            for (depth, key) in path.keys.enumerated() {
                try storage.database.run("SELECT value FROM server_data WHERE path = ?", [.text(Self.rowKey(prefix))]) { row in
                    if let value = Self.decode(row.blob(0)) { node = value.child(at: path.dropFirst(depth)) }
                }
                prefix = prefix.child(key)
            }
            try storage.database.run("SELECT path, value FROM server_data WHERE path >= ? AND path < ? ORDER BY path", Self.rowRange(path)) { row in
                guard let value = Self.decode(row.blob(1)) else { return }
                let relative = Self.path(ofRowKey: row.text(0)).dropFirst(path.count)
                node = relative.isRoot ? value : node.setting(relative, to: value)
            }
        }
        return node
    }

    private static func decode(_ bytes: [UInt8]) -> Node? {
        try? JSONReader.parse(data: bytes, options: JSONReader.Options(allowServerValues: false))
    }
}
