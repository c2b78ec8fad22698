// Benchmarks that print figures (run by Benchmarks/run, release build). No pass/fail.
import CMimalloc
import CSQLite
import Foundation
import NIOPosix
import RTDBClient
import RTDBProtocol
import RTDBRules
import RTDBTransport
import RTDBData
import RTDBEngine
import RTDBServer
import RTDBShell
import RTDBTestSupport
import Synchronization

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func residentMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let kb = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
        return kb / 1024
    }
    return 0
}

/// A client core on an in-process connection to `database`, with `cache` when given.
func connect(_ database: Database, cache: sending DiskCache? = nil) -> Repo {
    let (client, server) = InProcessTransport.pair()
    database.accept(server)
    return Repo(connector: { _, _ in client }, reconnect: .never, cache: cache)
}

/// A document of `n` user records, about 100 bytes each.
func sampleDocument(_ n: Int) -> String {
    var parts: [String] = []
    for i in 0..<n {
        parts.append(#""user\#(i)": {"name": "User number \#(i)", "age": \#(i % 90), "score": \#(Double(i) * 1.5), "active": \#(i % 2 == 0), "tags": ["a", "b\u00e9"]}"#)
    }
    return "{" + parts.joined(separator: ", ") + "}"
}

func jsonBenchmark() throws {
    let text = sampleDocument(10_000)
    let bytes = Array(text.utf8)
    let data = Data(bytes)
    let mb = Double(bytes.count) / 1_000_000
    let rounds = 20
    // Kept as a document (validated, its big containers left as text), as the server keeps a
    // body; and read whole into nodes, as small values are.
    var document = Node.empty, tree = Node.empty
    let parse = try seconds { for _ in 0..<rounds { document = try JSONReader.parse(data: bytes) } }
    let parseWhole = try seconds { for _ in 0..<rounds { tree = try JSONReader.parse(bytes: bytes.withUnsafeBufferPointer { $0 }) } }
    // The same value written compactly (as a client sends it), kept, and written out again.
    let compact = JSONWriter.bytes(tree)
    let kept = try JSONReader.parse(data: compact)
    let write = seconds { for _ in 0..<rounds { _ = JSONWriter.bytes(tree) } }
    // Into a buffer, as an answer or a message is written (`bytes` would hand the text over).
    let writeKept = seconds {
        for _ in 0..<rounds {
            var out: [UInt8] = []
            JSONWriter.write(kept, to: &out)
        }
    }
    let writeSpaced = seconds { for _ in 0..<rounds { _ = JSONWriter.bytes(document) } }
    var object: Any = 0
    let foundationParse = try seconds { for _ in 0..<rounds { object = try JSONSerialization.jsonObject(with: data) } }
    let foundationWrite = try seconds { for _ in 0..<rounds { _ = try JSONSerialization.data(withJSONObject: object) } }
    func rate(_ t: Double) -> Double { mb * Double(rounds) / t }
    print(String(format: "json: %.1f MB document; JSONReader %.0f MB/s kept as a document, %.0f MB/s read whole; "
                 + "JSONWriter %.0f MB/s from nodes, %.0f MB/s from a kept compact text, %.0f MB/s from the kept spaced one; "
                 + "JSONSerialization parse %.0f MB/s, write %.0f MB/s",
                 mb, rate(parse), rate(parseWhole), rate(write), rate(writeKept), rate(writeSpaced),
                 rate(foundationParse), rate(foundationWrite)))
}

/// Builds a database of `n` leaves under /list, closes it (a snapshot), and measures reopening.
func loadBenchmark(_ n: Int) async throws {
    let folder = NSTemporaryDirectory() + "rtdb-bench-load-\(n)-" + UUID().uuidString
    do {
        let database = try Database(folder: folder)
        let repo = connect(database)
        let build = try await seconds {
            let batch = 10_000
            for start in stride(from: 0, to: n, by: batch) {
                let updates = (start..<min(n, start + batch)).map { UpdateEntry(Path("k\($0)"), Node(.number(Double($0)))) }
                try await repo.update(Path("list"), updates)
            }
            await repo.waitForPendingWrites(idle: 600)
        }
        await repo.close()
        let close = seconds { database.close() }
        print(String(format: "load: wrote %d leaves in %.2f s (%.0f/s, updates of 10,000); close (a checkpoint) %.2f s",
                     n, build, Double(n) / build, close))
    }
    // Measure opening in a fresh process, so memory left from building does not count.
    fflush(nil)  // every stream: the child prints to the same terminal
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["open", folder]
    try process.run()
    process.waitUntilExit()
    try? FileManager.default.removeItem(atPath: folder)
}

/// Builds a large embedded database for `Benchmarks/run --big`: `leaves` leaves under /big,
/// in lists of 10,000 items of 10 leaves (about 1 KB of JSON each), written through the
/// engine, plus /sub, 1,000 items that a small database holds too.
func bigDatabase(_ folder: String, leaves: Int) throws {
    func item(_ i: Int, _ list: Int) -> Node {
        let fields: [(String, Node)] = [
            ("title", Node("item \(i) of list \(list)")), ("text", Node(String(repeating: "lorem ipsum dolor ", count: 42))),
            ("n", Node(Double(i))), ("list", Node(Double(list))), ("even", Node(i % 2 == 0)),
            ("created", Node(1_700_000_000_000 + Double(i))), ("author", Node("user\(i % 977)")),
            ("state", Node(["draft", "open", "closed"][i % 3])), ("score", Node(Double(i % 1000) / 10)),
            ("tag", Node("tag-\(i % 61)")),
        ]
        return Node(children: ChildMap(unsorted: fields.map { (ChildKey($0.0), $0.1) }))
    }
    func list(_ n: Int, _ list: Int) -> Node {
        Node(children: ChildMap(unsorted: (0..<n).map { (ChildKey("i\($0)"), item($0, list)) }))
    }
    let database = try Database(folder: folder)
    let lists = leaves / 100_000
    let done = DispatchSemaphore(value: 0)
    let failed = Failure()
    func put(_ path: String, _ value: Node) {
        database.submit(.put(path: Path(path), data: value, hash: nil)) { response in
            if response.status != .ok { failed.set(JSONWriter.string(response.data)) }
            done.signal()
        }
    }
    let time = seconds {
        put("sub", list(1000, -1))
        done.wait()
        for l in 0..<lists {
            put("big/list\(l)", list(10_000, l))
            done.wait()
            if l % 10 == 9 { FileHandle.standardError.write(Data("big: \((l + 1) * 100_000) leaves\n".utf8)) }
        }
        database.close()
    }
    if let message = failed.message {
        FileHandle.standardError.write(Data("big: a write failed: \(message)\n".utf8))
        exit(1)
    }
    let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    let size = files.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + $1)[.size] as? Int) ?? 0) }
    print(String(format: "big: %d leaves written in %.1f s (%.0f/s); %.0f MB on disk", lists * 100_000 + 10_000, time,
                 Double(lists * 100_000 + 10_000) / time, Double(size) / 1_000_000))
}

/// The engine beside SQLite (the candidate store it was chosen over) on the same work, both
/// in this process: `n` leaves written in durable batches of 10,000, then a fresh open and a
/// read of one leaf, and of a subtree of 1,000 items (10,000 leaves) made into a node, as the
/// server needs it. SQLite holds one row per leaf, keyed by its path, in WAL mode with
/// `synchronous=FULL` (each batch on disk at its commit, as each engine write is at its answer).
func storesBenchmark(_ n: Int) throws {
    let folder = NSTemporaryDirectory() + "rtdb-bench-stores-" + UUID().uuidString
    let file = folder + ".sqlite"
    defer {
        try? FileManager.default.removeItem(atPath: folder)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
    }
    let batch = 10_000
    func leafKey(_ i: Int) -> String { "k\(i)" }
    func item(_ i: Int) -> [(String, Node)] {
        (0..<10).map { ("f\($0)", $0 % 2 == 0 ? Node(Double(i * 10 + $0)) : Node("value \(i) \($0)")) }
    }

    // The engine: each batch one update, answered once durable.
    let engineWrite = try seconds {
        let database = try Database(folder: folder)
        let done = DispatchSemaphore(value: 0)
        let failed = Failure()
        func submit(_ request: Request) {
            database.submit(request) { response in
                if response.status != .ok { failed.set(JSONWriter.string(response.data)) }
                done.signal()
            }
            done.wait()
        }
        for start in stride(from: 0, to: n, by: batch) {
            submit(.merge(path: Path("list"), data: (start..<min(n, start + batch)).map { UpdateEntry(Path(leafKey($0)), Node(Double($0))) }))
        }
        submit(.merge(path: Path("sub"), data: (0..<1000).flatMap { i in item(i).map { UpdateEntry(Path("i\(i)/\($0.0)"), $0.1) } }))
        database.close()
        if let message = failed.message { throw BenchmarkError("a write failed: \(message)") }
    }
    var leaf = Node.empty, sub = Node.empty
    let engineLeaf = try seconds {
        let database = try Database(folder: folder)
        leaf = database.value(at: Path("list/k\(n / 2)"))
        database.close()
    }
    let engineSub = try seconds {
        let database = try Database(folder: folder)
        sub = database.value(at: Path("sub"))
        _ = sub.leafCount  // every leaf read
        database.close()
    }
    guard leaf == Node(Double(n / 2)), sub.leafCount == 10_000 else { throw BenchmarkError("the engine read back the wrong data") }

    // SQLite: each batch one transaction.
    var handle: OpaquePointer?
    guard sqlite3_open_v2(file, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else { throw BenchmarkError("cannot open \(file)") }
    func exec(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw BenchmarkError(String(cString: sqlite3_errmsg(handle))) }
    }
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    let sqliteWrite = try seconds {
        try exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE tree (path TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        var insert: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "INSERT OR REPLACE INTO tree VALUES (?, ?)", -1, &insert, nil) == SQLITE_OK else { throw BenchmarkError("prepare failed") }
        defer { sqlite3_finalize(insert) }
        func row(_ path: String, _ value: Node) throws {
            sqlite3_bind_text(insert, 1, path, -1, transient)
            sqlite3_bind_text(insert, 2, JSONWriter.string(value), -1, transient)
            guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchmarkError(String(cString: sqlite3_errmsg(handle))) }
            sqlite3_reset(insert)
        }
        for start in stride(from: 0, to: n, by: batch) {
            try exec("BEGIN")
            for i in start..<min(n, start + batch) { try row("/list/" + leafKey(i), Node(Double(i))) }
            try exec("COMMIT")
        }
        try exec("BEGIN")
        for i in 0..<1000 { for (key, value) in item(i) { try row("/sub/i\(i)/\(key)", value) } }
        try exec("COMMIT")
    }
    sqlite3_close(handle)
    let sqliteLeaf = try sqliteSeconds(file, ["SELECT value FROM tree WHERE path = '/list/k\(n / 2)'"])
    // The subtree: a range of keys, every row's path and value read.
    var rows = 0
    let sqliteSub = try seconds {
        var reader: OpaquePointer?
        guard sqlite3_open_v2(file, &reader, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { throw BenchmarkError("cannot open \(file)") }
        defer { sqlite3_close(reader) }
        var select: OpaquePointer?
        guard sqlite3_prepare_v2(reader, "SELECT path, value FROM tree WHERE path >= '/sub/' AND path < '/sub0'", -1, &select, nil) == SQLITE_OK else { throw BenchmarkError("prepare failed") }
        defer { sqlite3_finalize(select) }
        var entries: [(Path, Node)] = []
        while sqlite3_step(select) == SQLITE_ROW {
            let path = Path(String(String(cString: sqlite3_column_text(select, 0)).dropFirst(5)))
            entries.append((path, try JSONReader.parse(String(cString: sqlite3_column_text(select, 1)))))
            rows += 1
        }
        sub = Node.empty.merging(entries)
    }
    guard rows == 10_000, sub.leafCount == 10_000 else { throw BenchmarkError("SQLite read back \(rows) rows") }
    func size(_ paths: [String]) -> Double {
        Double(paths.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }) / 1_000_000
    }
    let engineFiles = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).map { folder + "/" + $0 }
    print(String(format: "stores: %d leaves in durable batches of 10,000: engine %.2f s, SQLite %.2f s (ratio %.2f); %.0f MB and %.0f MB on disk",
                 n, engineWrite, sqliteWrite, engineWrite / sqliteWrite, size(engineFiles), size([file, file + "-wal"])))
    print(String(format: "stores: open and read one leaf: engine %.2f ms, SQLite %.2f ms (ratio %.2f); a subtree of 1,000 items (10,000 leaves): engine %.1f ms, SQLite %.1f ms (ratio %.2f)",
                 engineLeaf * 1000, sqliteLeaf * 1000, engineLeaf / sqliteLeaf, engineSub * 1000, sqliteSub * 1000, engineSub / sqliteSub))
}

/// `snapshot save` and `snapshot restore` of a list of `n` leaves, beside SQLite's online
/// backup of a table holding the same rows, to a file and back from it: a restore costs the
/// same for any size, where copying the data back costs in proportion to it.
func snapshotsBenchmark(_ n: Int) throws {
    let folder = NSTemporaryDirectory() + "rtdb-bench-snapshots-" + UUID().uuidString
    let live = folder + ".sqlite", backup = folder + "-backup.sqlite"
    defer {
        try? FileManager.default.removeItem(atPath: folder)
        for file in [live, backup] { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) } }
    }
    let list = Node.empty.merging((0..<n).map { (Path("k\($0)"), Node(Double($0))) })
    let database = try Database(folder: folder)
    let done = DispatchSemaphore(value: 0)
    let failed = Failure()
    database.write(Path("list"), list) { response in
        if response.status != .ok { failed.set(response.message) }
        done.signal()
    }
    done.wait()
    let bytes = Mutex(0)
    let save = seconds {
        database.saveSnapshot("bench") { outcome in
            switch outcome {
            case .success(let info): bytes.withLock { $0 = info.bytes }
            case .failure(let error): failed.set("\(error)")
            }
            done.signal()
        }
        done.wait()
    }
    database.write(Path("list/k0"), Node("changed")) { _ in done.signal() }
    done.wait()
    let restore = seconds {
        database.restoreSnapshot("bench") { response in
            if response.status != .ok { failed.set(response.message) }
            done.signal()
        }
        done.wait()
    }
    let restored = database.value(at: Path("list/k0"))
    database.close()
    if let message = failed.message { throw BenchmarkError("snapshots: \(message)") }
    guard restored == Node(0.0) else { throw BenchmarkError("snapshots: the restore did not bring the saved value back") }

    // SQLite: the same rows, durably, then its online backup to a file and back.
    var handle: OpaquePointer?
    guard sqlite3_open_v2(live, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else { throw BenchmarkError("cannot open \(live)") }
    defer { sqlite3_close(handle) }
    func exec(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw BenchmarkError(String(cString: sqlite3_errmsg(handle))) }
    }
    try exec("PRAGMA synchronous=FULL; CREATE TABLE tree (path TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID; BEGIN")
    var insert: OpaquePointer?
    guard sqlite3_prepare_v2(handle, "INSERT INTO tree VALUES (?, ?)", -1, &insert, nil) == SQLITE_OK else { throw BenchmarkError("prepare failed") }
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    for i in 0..<n {
        sqlite3_bind_text(insert, 1, "/list/k\(i)", -1, transient)
        sqlite3_bind_text(insert, 2, String(i), -1, transient)
        guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchmarkError(String(cString: sqlite3_errmsg(handle))) }
        sqlite3_reset(insert)
    }
    sqlite3_finalize(insert)
    try exec("COMMIT")
    /// Copies database `from` (a handle) into the file `to` (or the other way), durably.
    func copy(from source: OpaquePointer?, to destination: OpaquePointer?) throws {
        guard let step = sqlite3_backup_init(destination, "main", source, "main") else { throw BenchmarkError("backup_init failed") }
        let result = sqlite3_backup_step(step, -1)
        sqlite3_backup_finish(step)
        guard result == SQLITE_DONE else { throw BenchmarkError("backup failed: \(result)") }
    }
    var other: OpaquePointer?
    guard sqlite3_open_v2(backup, &other, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else { throw BenchmarkError("cannot open \(backup)") }
    defer { sqlite3_close(other) }
    guard sqlite3_exec(other, "PRAGMA synchronous=FULL", nil, nil, nil) == SQLITE_OK else { throw BenchmarkError("pragma failed") }
    let sqliteSave = try seconds { try copy(from: handle, to: other) }
    try exec("UPDATE tree SET value = 'changed' WHERE path = '/list/k0'")
    let sqliteRestore = try seconds { try copy(from: other, to: handle) }
    print(String(format: "snapshots: %d leaves (%.1f MB snapshot): save %.1f ms, SQLite backup %.1f ms (ratio %.2f); restore %.2f ms, SQLite restore from its backup %.1f ms (ratio %.3f)",
                 n, Double(bytes.withLock { $0 }) / 1_000_000, save * 1000, sqliteSave * 1000, save / sqliteSave, restore * 1000, sqliteRestore * 1000, restore / sqliteRestore))
}

final class Failure: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var message: String?
    func set(_ m: String) { lock.lock(); message = message ?? m; lock.unlock() }
}

func openBenchmark(_ folder: String) throws {
    let before = residentMegabytes()
    var database: Database!
    let open = try seconds { database = try Database(folder: folder) }
    let after = residentMegabytes()
    let count = database.value(at: Path("list")).childCount
    let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    let size = files.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + $1)[.size] as? Int) ?? 0) }
    print(String(format: "load: opened %d leaves in %.2f s; resident memory %.0f MB after open (+%.0f MB, %.0f bytes per leaf); %.1f MB on disk",
                 count, open, after, after - before, (after - before) * 1_048_576 / Double(max(1, count)), Double(size) / 1_000_000))
    database.close()
}

/// A query index's own work for one write to an ordered child (its entry taken out and put
/// back at its new place) in an index of `n` children, on one thread, for a profiler
/// (`valgrind --tool=callgrind` counts its instructions exactly).
func indexUpdatesBenchmark(_ n: Int, updates: Int) {
    var rng = SeededRandom(seed: 1)  // the same numbers on every run, and no system call
    var values = (0..<n).map { _ in Double(rng.next() % 1_000_000_000) }
    let keys = (0..<n).map { ChildKey("k\($0)") }
    let sorted = (0..<n).sorted { values[$0] != values[$1] ? values[$0] < values[$1] : ChildKey.compare(keys[$0], keys[$1]) < 0 }
    var tree = WeightBalancedTree<IndexEntry>(count: n) { IndexEntry(value: Node(values[sorted[$0]]), key: keys[sorted[$0]]) }
    let picks = (0..<updates).map { _ in Int(rng.next() % UInt64(n)) }
    let time = seconds {
        for (i, k) in picks.enumerated() {
            tree.remove(IndexEntry(value: Node(values[k]), key: keys[k]))
            values[k] = Double(1_000_000_000 + i)
            tree.insert(IndexEntry(value: Node(values[k]), key: keys[k]))
        }
    }
    precondition(tree.count == n)
    print(String(format: "index-updates: %d updates in an index of %d: %.2f µs each", updates, n, time / Double(updates) * 1e6))
}

/// What a child costs in memory, as the engine holds a document it was sent: resident memory
/// added by reading each shape (the JSON's own bytes are allocated before), per child and
/// beside the JSON's bytes per child. Each shape in a process of its own (`shape` given),
/// so that none reuses memory another freed.
func childBytesBenchmark(_ n: Int, shape: Int?) throws {
    /// A container's text made child by child, with no string of the whole (whose freeing
    /// during the measurement would count against it).
    func text(_ open: String, _ count: Int, _ close: String, _ child: (Int) -> String) -> [UInt8] {
        var bytes = Array(open.utf8)
        for i in 0..<count {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += child(i).utf8
        }
        return bytes + Array(close.utf8)
    }
    let shapes: [(name: String, children: Int, json: () -> [UInt8])] = [
        ("an object of \(n) numbers", n, { text("{", n, "}") { #""k\#($0)":\#($0 % 1000)"# } }),
        ("an array of \(n) ones", n, { text("[", n, "]") { _ in "1" } }),
        ("\(n / 4) objects of two fields", n / 4, { text("{", n / 4, "}") { #""u\#($0)":{"a":\#($0),"b":"x\#($0 % 10)"}"# } }),
    ]
    guard let shape else {
        var parts: [String] = []
        for i in shapes.indices {
            let pipe = Pipe()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = ["child-bytes", String(n), String(i)]
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            parts.append(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        print("child-bytes: " + parts.joined(separator: "; "))
        return
    }
    guard shapes.indices.contains(shape) else { throw CocoaError(.featureUnsupported) }
    // Freed memory goes back to the system at once, as `rtdb serve` has it: given back after
    // a delay, the room the text was grown through would leave during the measurement.
    rtdb_mi_return_memory_at_once()
    let bytes = shapes[shape].json()
    let children = Double(shapes[shape].children)
    // Kept as a document (what a write of it holds): its tables, beside the text itself.
    let before = residentMegabytes()
    let document = try JSONReader.parse(data: bytes)
    let kept = residentMegabytes()
    // Read whole, as a tree (what a changed list becomes).
    let tree = try bytes.withUnsafeBufferPointer { try JSONReader.parse(bytes: $0) }
    let after = residentMegabytes()
    precondition(document.childCount == shapes[shape].children && tree.childCount == shapes[shape].children)
    print(String(format: "%@: JSON %.1f bytes per child, kept as a document %.1f more, as a tree %.0f", shapes[shape].name,
                 Double(bytes.count) / children, (kept - before) * 1_048_576 / children, (after - kept) * 1_048_576 / children))
    withExtendedLifetime((document, tree)) {}
}

/// The data tree's own work for writes below the children of a list of `n` children (as the
/// engine applies a `set` of `notes/kK/lastModified`, or an `update` of `batch` of them, in
/// place), on
/// one thread, for a profiler. `n` and `batch` are at least 1; no writes measures the setup
/// alone, to subtract from a profile.
func treeWritesBenchmark(_ n: Int, writes: Int, batch: Int) {
    var rng = SeededRandom(seed: 1)
    // Built in a closure, so the tree alone holds its children (as the engine's tree does).
    var root = {
        let children = (0..<n).map { (ChildKey("k\($0)"), Node(children: ChildMap(unsorted: [(ChildKey("lastModified"), Node(Double(rng.next() % 1_000_000_000)))]))) }
        return Node(children: ChildMap(unsorted: [(ChildKey("notes"), Node(children: ChildMap(unsorted: children)))]))
    }()
    let entries = (0..<writes).map { i in (Path("notes/k\(rng.next() % UInt64(n))/lastModified"), Node(Double(1_000_000_000 + i))) }
    let batches = stride(from: 0, to: writes, by: batch).map { Array(entries[$0..<min(writes, $0 + batch)]) }
    let time = seconds {
        for update in batches { root.merge(update) }
    }
    precondition(root.child(at: Path("notes")).childCount == n)
    print(String(format: "tree-writes: %d writes in updates of %d below the children of a list of %d: %.2f µs each", writes, batch, n, writes == 0 ? 0 : time / Double(writes) * 1e6))
}

/// Single writes through the client core, pipelined, all acknowledged and durable.
func writeBenchmark(_ n: Int) async throws {
    let folder = NSTemporaryDirectory() + "rtdb-bench-write-" + UUID().uuidString
    let database = try Database(folder: folder)
    let repo = connect(database)
    StageClock.reset()
    let time = try await seconds {
        for i in 0..<n { try await repo.set(Path("bench/k\(i)"), Node(.number(Double(i)))) }
        await repo.waitForPendingWrites(idle: 600)
    }
    print(String(format: "writes: %d pipelined sets through the client core, acknowledged and durable, in %.2f s (%.0f/s)", n, time, Double(n) / time))
    if StageClock.isOn { print(StageClock.report(wall: time, label: "pipelined sets through the client core")) }
    await repo.close()
    database.close()
    try? FileManager.default.removeItem(atPath: folder)
}

/// Pipelined sets through the client core with nobody watching and with one monitor that
/// turns each operation into its JSON line (as `monitor --json` prints it): what a monitor
/// costs per write. Best of three alternating runs each.
func monitorBenchmark(_ n: Int, rounds: Int = 3) async throws {
    func run(watched: Bool) async throws -> Double {
        let folder = NSTemporaryDirectory() + "rtdb-bench-monitor-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = try Database(folder: folder)
        let seen = EventCounter(), lost = EventCounter()
        let subscription = watched ? database.operations.subscribe { records, dropped in
            for _ in 0..<dropped { lost.add() }
            for record in records { if !record.jsonBytes.isEmpty { seen.add() } }
        } : nil
        let repo = connect(database)
        let time = try await seconds {
            for i in 0..<n { try await repo.set(Path("bench/k\(i)"), Node(.number(Double(i)))) }
            await repo.waitForPendingWrites(idle: 600)
        }
        await repo.close()
        // Its last batch, gathered for a moment before it is handed on.
        let deadline = Date().addingTimeInterval(5)
        while watched && seen.count + lost.count < n && Date() < deadline { usleep(1_000) }
        subscription?.cancel()
        database.close()
        if watched && seen.count + lost.count < n { throw BenchmarkError("the monitor heard of \(seen.count + lost.count) of \(n) writes") }
        if lost.count > 0 { print("monitor: \(lost.count) of \(n) operations dropped") }
        return time
    }
    var unwatched = Double.infinity, watched = Double.infinity
    for _ in 0..<rounds {
        unwatched = min(unwatched, try await run(watched: false))
        watched = min(watched, try await run(watched: true))
    }
    print(String(format: "monitor: %d pipelined sets through the client core: nobody watching %.2f µs each, one monitor %.2f µs each (ratio %.2f)",
                 n, unwatched / Double(n) * 1e6, watched / Double(n) * 1e6, watched / unwatched))
}

/// A realistic rules file: a few dozen rules, wildcards, `root.child()` lookups, validation
/// of each field of a note, a regex.
let realisticRules = #"""
{
  "rules": {
    ".read": false,
    ".write": false,
    "admins": { ".read": "auth != null" },
    "banned": {
      ".read": "root.child('admins').child(auth.uid).exists()",
      ".write": "root.child('admins').child(auth.uid).exists()"
    },
    "users": {
      "$uid": {
        ".read": "auth != null && (auth.uid == $uid || root.child('admins').child(auth.uid).exists())",
        ".write": "auth != null && auth.uid == $uid && !root.child('banned').child(auth.uid).exists()",
        "profile": {
          "name": { ".validate": "newData.isString() && newData.val().length > 0 && newData.val().length <= 100" },
          "email": { ".validate": "newData.isString() && newData.val().matches(/^[^@]+@[^@]+\.[a-z]{2,}$/i)" },
          "$other": { ".validate": false }
        },
        "notes": {
          ".indexOn": ["createdAt"],
          "$note": {
            ".validate": "newData.hasChildren(['text', 'createdAt', 'author'])",
            "text": { ".validate": "newData.isString() && newData.val().length < 10000" },
            "createdAt": { ".validate": "newData.isNumber() && newData.val() <= now" },
            "author": { ".validate": "newData.val() === auth.uid" },
            "tags": { "$tag": { ".validate": "newData.isBoolean()" } },
            "$other": { ".validate": false }
          }
        }
      }
    },
    "rooms": {
      "$room": {
        ".read": "data.child('members').hasChild(auth.uid)",
        "messages": {
          "$message": {
            ".write": "root.child('rooms').child($room).child('members').child(auth.uid).exists()",
            ".validate": "newData.child('author').val() === auth.uid && newData.child('text').isString()"
          }
        }
      }
    },
    "public": { ".read": true, ".write": "auth != null && auth.token.email_verified == true" }
  }
}
"""#

/// Writes per second by a signed-in user with the realistic rules against the same writes
/// with open rules: through the client core (what a user sees), and straight into the engine
/// (where the rules' share is largest). Best of three alternating runs each.
func rulesBenchmark(_ n: Int, rounds: Int = 3) async throws {
    // Counting coverage, as a server's namespace does.
    let rules = try SecurityRules(parsing: realisticRules).counting()
    let token = Identity.unsignedToken(uid: "ada", now: Date().timeIntervalSince1970)
    let identity = try Identity.from(credential: token, now: Date().timeIntervalSince1970)
    func note(_ i: Int) -> Node {
        Node(children: ChildMap(unsorted: [(ChildKey("text"), Node("note \(i)")), (ChildKey("createdAt"), Node(Double(i))),
                                          (ChildKey("author"), Node("ada")), (ChildKey("tags"), Node(children: ChildMap(unsorted: [(ChildKey("work"), Node(true))])))]))
    }
    func throughClient(_ rules: SecurityRules) async throws -> Double {
        let folder = NSTemporaryDirectory() + "rtdb-bench-rules-" + UUID().uuidString
        let database = try Database(folder: folder)
        database.replaceRules(rules)
        let repo = connect(database)
        try await repo.authenticate(token: token, google: false)
        let time = try await seconds {
            for i in 0..<n { try await repo.set(Path("users/ada/notes/n\(i)"), note(i)) }
            await repo.waitForPendingWrites(idle: 600)
        }
        await repo.close()
        database.close()
        try? FileManager.default.removeItem(atPath: folder)
        return Double(n) / time
    }
    func intoEngine(_ rules: SecurityRules) async throws -> Double {
        let folder = NSTemporaryDirectory() + "rtdb-bench-rules-" + UUID().uuidString
        let database = try Database(folder: folder)
        database.replaceRules(rules)
        let done = Countdown(n)
        let failures = EventCounter()
        let time = try await seconds {
            for i in 0..<n {
                database.submit(.put(path: Path("users/ada/notes/n\(i)"), data: note(i), hash: nil), as: identity) { response in
                    if !response.isOK { failures.add() }
                    done.tick()
                }
            }
            try await done.done.value()
        }
        database.close()
        try? FileManager.default.removeItem(atPath: folder)
        precondition(failures.count == 0, "the benchmark's writes must be allowed")
        return Double(n) / time
    }
    // The check alone, on a tree of n notes: what each write pays for the rules.
    var tree = Node.empty
    for i in 0..<n { tree = tree.setting(Path("users/ada/notes/n\(i)"), to: note(i)) }
    let checks = n
    let now = Date().timeIntervalSince1970 * 1000
    let writes = (0..<checks).map { i in (Path("users/ada/notes/n\(n + i)"), note(i)) }
    let afters = writes.map { tree.setting($0.0, to: $0.1) }
    var denied = 0
    let checkTime = seconds {
        for (write, after) in zip(writes, afters) where rules.checkWrite([write], identity: identity, before: tree, after: after, now: now) != nil {
            denied += 1
        }
    }
    precondition(denied == 0, "the benchmark's writes must be allowed")
    let perCheck = checkTime / Double(checks) * 1e6
    // The same checks not counted in the coverage report: what counting costs.
    let uncountedTime = seconds {
        for (write, after) in zip(writes, afters) where rules.checkWrite([write], identity: identity, before: tree, after: after, now: now, counted: false) != nil {
            denied += 1
        }
    }
    let perUncounted = uncountedTime / Double(checks) * 1e6
    var client = (open: 0.0, rules: 0.0), engine = (open: 0.0, rules: 0.0)
    for _ in 0..<rounds {
        client.open = max(client.open, try await throughClient(.open))
        client.rules = max(client.rules, try await throughClient(rules))
        engine.open = max(engine.open, try await intoEngine(.open))
        engine.rules = max(engine.rules, try await intoEngine(rules))
    }
    print(String(format: "rules: %d notes written by a signed-in user, a realistic rules file (22 rules) against open rules: through the client core %.0f/s vs %.0f/s (%.0f%%); into the engine %.0f/s vs %.0f/s (%.0f%%); the check alone %.2f µs per write (%.2f µs without counting coverage)",
                 n, client.rules, client.open, client.rules / client.open * 100, engine.rules, engine.open, engine.rules / engine.open * 100, perCheck, perUncounted))
    // A rules file with many sibling keys (one per tenant, generated): parsed as rules, and
    // as plain JSON by Foundation, the anchor.
    let tenants = 200_000
    let wide = #"{"rules": {"# + (0..<tenants).map { #""t\#($0)": {".read": true}"# }.joined(separator: ", ") + "}}"
    let parse = try seconds { _ = try SecurityRules(parsing: wide) }
    let foundation = try seconds { _ = try JSONSerialization.jsonObject(with: Data(wide.utf8)) }
    print(String(format: "rules: a file of %d sibling keys (%.1f MB) parsed in %.0f ms; Foundation's JSON parse of it %.0f ms (ratio %.2f)",
                 tenants, Double(wide.utf8.count) / 1e6, parse * 1000, foundation * 1000, parse / foundation))
}

/// A watched `--orderByChild lastModified --limitToLast 4` on a list of `n` children:
/// the first answer (the engine builds its index), a second client's answer (index
/// exists), the cost per write of keeping the query current under random writes, and the
/// first answer in the next open (the index was stored with the data at close).
func queryBenchmark(_ n: Int, writes: Int) async throws {
    let folder = NSTemporaryDirectory() + "rtdb-bench-query-" + UUID().uuidString
    var rng = SystemRandomNumberGenerator()
    do {
        let database = try Database(folder: folder)
        let writer = connect(database)
        let batch = 10_000
        for start in stride(from: 0, to: n, by: batch) {
            let updates = (start..<min(n, start + batch)).map {
                UpdateEntry(Path("k\($0)/lastModified"), Node(.number(Double(Int.random(in: 0..<1_000_000_000, using: &rng)))))
            }
            try await writer.update(Path("notes"), updates)
        }
        await writer.waitForPendingWrites(idle: 600)
        await writer.close()
        database.close()
    }
    // Opened again, as a user exploring a database finds it: the list is read from the node
    // file (and no checkpoint of the build runs beside the measurement).
    let database = try Database(folder: folder)
    let writer = connect(database)

    let query = QuerySpec(path: Path("notes"), params: QueryParams().ordered(by: .child(Path("lastModified"))).limitToLast(4))
    func firstValue(_ repo: Repo) async throws -> (Double, EventRegistration, EventCounter) {
        let counter = EventCounter()
        let first = OneShot<Void>()
        let registration = EventRegistration { event in
            counter.add()
            if event.type == .value { first.succeed() }
        }
        let time = try await seconds {
            await repo.listen(query, registration)
            try await first.value()
        }
        return (time, registration, counter)
    }
    // The same writes with nothing watching: what a write to the list costs by itself.
    let unwatchedKeys = (0..<writes).map { _ in Int.random(in: 0..<n, using: &rng) }
    let unwatched = try await seconds {
        for (i, k) in unwatchedKeys.enumerated() {
            try await writer.set(Path("notes/k\(k)/lastModified"), Node(.number(Double(500_000_000 + i))))
        }
        await writer.waitForPendingWrites(idle: 600)
    }
    let watcher = connect(database)
    let (first, _, counter) = try await firstValue(watcher)
    let (second, _, _) = try await firstValue(connect(database))
    let eventCount = { counter.count }

    // Random children get newer or older timestamps while two watched queries stay current.
    let before = eventCount()
    let keys = (0..<writes).map { _ in Int.random(in: 0..<n, using: &rng) }
    let watched = try await seconds {
        for (i, k) in keys.enumerated() {
            try await writer.set(Path("notes/k\(k)/lastModified"), Node(.number(Double(1_000_000_000 + i))))
        }
        await writer.waitForPendingWrites(idle: 600)
        await watcher.waitForQueuedEvents()
    }
    let events = eventCount() - before
    // Writes to another field of the children: the index stays as it is.
    let retitled = (0..<writes).map { _ in Int.random(in: 0..<n, using: &rng) }
    let otherField = try await seconds {
        for (i, k) in retitled.enumerated() {
            try await writer.set(Path("notes/k\(k)/title"), Node("title \(i)"))
        }
        await writer.waitForPendingWrites(idle: 600)
        await watcher.waitForQueuedEvents()
    }
    await watcher.close()
    // The engine's share alone: the same kind of writes, with the query watched by a
    // connection that only counts what it is sent (no client core behind it).
    let (raw, server) = InProcessTransport.pair()
    database.accept(server)
    let pushes = EventCounter()
    let listening = OneShot<Void>()
    raw.start(onMessage: { message in
        if case .push = message { pushes.add() } else { listening.succeed() }
    }, onClose: {})
    raw.send(.request(id: 1, .listen(path: query.path, query: query.params, tag: 1, hash: "")))
    try await listening.value()
    let pushesBefore = pushes.count
    let rawKeys = (0..<writes).map { _ in Int.random(in: 0..<n, using: &rng) }
    let engineAlone = try await seconds {
        for (i, k) in rawKeys.enumerated() {
            try await writer.set(Path("notes/k\(k)/lastModified"), Node(.number(Double(2_000_000_000 + i))))
        }
        await writer.waitForPendingWrites(idle: 600)
    }
    let rawPushes = pushes.count - pushesBefore
    raw.close()
    await writer.close()
    let closing = seconds { database.close() }
    var stored = 0.0
    do {
        let start = DispatchTime.now()
        let reopened = try Database(folder: folder)
        _ = try await firstValue(connect(reopened))
        stored = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        reopened.close()
    }
    print(String(format: "query: %8d children: first answer %.3f s (builds the index), with the index %.4f s; %d writes with the query watched: %.1f µs per write (unwatched: %.1f µs; to another field than the ordered one: %.1f µs), %d events; the engine alone (a watcher that only counts its messages): %.1f µs per write, %d updates; close (stores the index) %.2f s, next open and first answer (stored index) %.4f s",
                 n, first, second, writes, watched / Double(writes) * 1e6, unwatched / Double(writes) * 1e6, otherField / Double(writes) * 1e6,
                 events, engineAlone / Double(writes) * 1e6, rawPushes, closing, stored))
    try? FileManager.default.removeItem(atPath: folder)
}

/// From a write to its event at a listener in the same client (what a background watch in
/// the shell prints), and at a listener on a second connection (after the engine).
func latencyBenchmark(_ rounds: Int) async throws {
    let folder = NSTemporaryDirectory() + "rtdb-bench-latency-" + UUID().uuidString
    let database = try Database(folder: folder)
    let writer = connect(database), other = connect(database)
    for (name, listener) in [("same client", writer), ("second connection", other)] {
        var samples: [Double] = []
        let semaphore = DispatchSemaphore(value: 0)
        let registration = EventRegistration(types: [.childChanged, .childAdded]) { _ in semaphore.signal() }
        await listener.listen(QuerySpec(path: Path("latency")), registration)
        await listener.waitForQueuedEvents()
        usleep(100_000)
        while semaphore.wait(timeout: .now()) == .success {}
        for i in 0..<rounds {
            let start = DispatchTime.now().uptimeNanoseconds
            try await writer.set(Path("latency/k\(i % 10)"), Node(.number(Double(i))))
            semaphore.wait()
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
        }
        await writer.waitForPendingWrites(idle: 60)
        samples.sort()
        print(String(format: "latency: write to event, %@: median %.0f µs, p99 %.0f µs (%d writes)",
                     name, samples[samples.count / 2], samples[samples.count * 99 / 100], rounds))
        await listener.unlisten(QuerySpec(path: Path("latency")), registration)
    }
    database.close()
    try? FileManager.default.removeItem(atPath: folder)
}

/// `rtdb serve` in this process on a free port, clients over real WebSockets on loopback.
/// `writesOnly`: just the pipelined writes (`RTDBBenchmarks network-writes`, for a profiler).
func networkBenchmark(writesOnly: Bool = false) async throws {
    let folder = NSTemporaryDirectory() + "rtdb-bench-net-" + UUID().uuidString
    let server = NetworkServer(namespaces: try Namespaces(folder: folder), log: { _ in })
    let port = try server.start(host: "127.0.0.1", port: 0)
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let address = ServerAddress(host: "127.0.0.1", port: port, namespace: "bench")
    func connect() async throws -> Repo {
        let repo = Repo(transport: WebSocketClientTransport(address: address, group: group))
        _ = try await repo.firstConnectionEstablished()
        return repo
    }
    let writer = try await connect()
    let n = 100_000
    StageClock.reset()
    let time = try await seconds {
        for i in 0..<n { try await writer.set(Path("w/k\(i)"), Node(.number(Double(i)))) }
        await writer.waitForPendingWrites(idle: 600)
    }
    print(String(format: "network: %d pipelined writes over one WebSocket, acknowledged and durable: %.2f s (%.0f/s)", n, time, Double(n) / time))
    if StageClock.isOn { print(StageClock.report(wall: time, label: "pipelined writes over one WebSocket")) }
    if writesOnly { return }

    var watchers: [Repo] = []
    let before = residentMegabytes()
    for count in [1, 100, 1000] {
        while watchers.count < count { watchers.append(try await connect()) }
        let ready = Countdown(count), all = Countdown(count)
        let path = Path("fan\(count)")
        var registrations: [EventRegistration] = []
        for watcher in watchers {
            let first = EventCounter()
            let registration = EventRegistration(types: [.value]) { _ in
                // The first event is the current (empty) value; the second is the write.
                first.add() == 1 ? ready.tick() : all.tick()
            }
            registrations.append(registration)
            await watcher.listen(QuerySpec(path: path), registration)
        }
        try await ready.done.value()
        let fanout = try await seconds {
            try await writer.set(path, Node("news"))
            try await all.done.value()
        }
        print(String(format: "network: one write fanned out to %4d watching connections: the last had it after %.1f ms", count, fanout * 1000))
        for (watcher, registration) in zip(watchers, registrations) { await watcher.unlisten(QuerySpec(path: path), registration) }
    }
    let after = residentMegabytes()
    print(String(format: "network: memory per idle connection (client and server ends, one process): %.0f KB (%.0f MB for %d)",
                 (after - before) * 1024 / Double(watchers.count), after - before, watchers.count))
    for watcher in watchers { await watcher.close() }
    await writer.close()
    try? await group.shutdownGracefully()
    server.shutdown()
    try? FileManager.default.removeItem(atPath: folder)
}

/// Writes made while the server is down, then the time from its restart until every one is
/// acknowledged (the restore itself: the client retries every 50 ms here). At most
/// `maxPendingWrites` writes wait unacknowledged; more would block until the server is back.
func reconnectBenchmark(_ requested: Int) async throws {
    let folder = NSTemporaryDirectory() + "rtdb-bench-reconnect-" + UUID().uuidString
    var server = NetworkServer(namespaces: try Namespaces(folder: folder), log: { _ in })
    let port = try server.start(host: "127.0.0.1", port: 0)
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let address = ServerAddress(host: "127.0.0.1", port: port, namespace: "bench")
    let repo = Repo(connector: { _, last in WebSocketClientTransport(address: address, lastSessionID: last, group: group) },
                    reconnect: ReconnectPolicy(minDelay: 0.05, maxDelay: 0.05))
    let n = min(requested, repo.maxPendingWrites)
    _ = try await repo.firstConnectionEstablished()
    let listening = OneShot<Void>()
    await repo.listen(QuerySpec(path: Path("offline")), EventRegistration(types: [.value]) { _ in listening.succeed() })
    try await listening.value()
    server.shutdown()
    while await repo.isConnected { usleep(500) }
    let local = try await seconds {
        for i in 0..<n { try await repo.set(Path("offline/k\(i)"), Node(.number(Double(i)))) }
        await repo.waitForQueuedEvents()
    }
    server = NetworkServer(namespaces: try Namespaces(folder: folder), log: { _ in })
    let restore = try await seconds {
        _ = try server.start(host: "127.0.0.1", port: port)
        await repo.waitForPendingWrites(idle: 600)
    }
    print(String(format: "reconnect: %d writes made offline (applied locally in %.2f s, watched); after the server's restart all were acknowledged in %.2f s",
                 n, local, restore))
    await repo.close()
    try? await group.shutdownGracefully()
    server.shutdown()
    try? FileManager.default.removeItem(atPath: folder)
}

/// Pipelined writes over `wss://` to a server with a certificate made here by openssl.
func tlsBenchmark(_ n: Int) async throws {
    let folder = NSTemporaryDirectory() + "rtdb-bench-tls-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let openssl = Process()
    openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    openssl.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                         "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                         "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem"]
    openssl.standardError = FileHandle.nullDevice
    try openssl.run()
    openssl.waitUntilExit()
    let server = NetworkServer(namespaces: try Namespaces(folder: folder + "/data"), log: { _ in })
    let port = try server.start(host: "127.0.0.1", port: 0,
                                tls: try NetworkServer.tlsContext(certificateFile: folder + "/cert.pem", keyFile: folder + "/key.pem"))
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let tls = try ClientTLS.context(trustedCertificates: folder + "/cert.pem")
    let address = ServerAddress(host: "127.0.0.1", port: port, namespace: "bench", secure: true)
    let repo = Repo(transport: WebSocketClientTransport(address: address, tls: tls, group: group))
    let connect = try await seconds { _ = try await repo.firstConnectionEstablished() }
    let time = try await seconds {
        for i in 0..<n { try await repo.set(Path("w/k\(i)"), Node(.number(Double(i)))) }
        await repo.waitForPendingWrites(idle: 600)
    }
    print(String(format: "tls: connected (TCP, TLS, WebSocket, hello) in %.1f ms; %d pipelined writes over wss://, acknowledged and durable: %.2f s (%.0f/s)",
                 connect * 1000, n, time, Double(n) / time))
    await repo.close()
    try? await group.shutdownGracefully()
    server.shutdown()
    try? FileManager.default.removeItem(atPath: folder)
}

/// The client's disk cache: opening one that holds 10 MB and reading a note from it, as a
/// shell started offline does; and writes queued while offline, each on disk (committed)
/// before it counts, in a burst (a script) and one at a time (a person at the prompt).
func cacheBenchmark(_ n: Int) async throws {
    let folder = NSTemporaryDirectory() + "rtdb-bench-cache-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // 10 MB of notes as a watch brings them: one overwrite of the list, then changes to single notes.
    do {
        let cache = try DiskCache(folder: folder, limit: 100_000_000)
        var notes: [(ChildKey, Node)] = []
        for i in 0..<40_000 {
            notes.append((ChildKey("n\(i)"), Node(children: ChildMap(unsorted: [
                (ChildKey("text"), Node(String(repeating: "note \(i) ", count: 20))), (ChildKey("lastModified"), Node(Double(i)))]))))
        }
        let list = Node(children: ChildMap(unsorted: notes))
        let database = try Database(folder: folder + "-server")
        defer { database.close(); try? FileManager.default.removeItem(atPath: folder + "-server") }
        let repo = connect(database, cache: cache)
        try await repo.set(Path("notes"), list).acknowledged()
        _ = try await repo.get(Path("notes"))
        for i in 0..<1000 { try await repo.set(Path("notes/n\(i)/lastModified"), Node(Double(i + 40_000))).acknowledged() }
        _ = try await repo.get(Path("notes/n5"))
        let size = await repo.cacheSummary?.dataBytes ?? 0
        await repo.close()
        print(String(format: "cache: %.1f MB of notes cached", Double(size) / 1e6))
    }
    var opens: [Double] = []
    for _ in 0..<5 {
        opens.append(try await seconds {
            let repo = Repo(connector: { _, _ in NeverConnects() }, cache: try DiskCache(folder: folder, limit: 100_000_000))
            let note = try await repo.get(Path("notes/n5"))
            precondition(!note.isEmpty, "the cached note is missing")
            await repo.close()
        })
    }
    // The anchor: SQLite itself opening the same file and reading that note's row.
    var rawOpens: [Double] = []
    for _ in 0..<5 {
        rawOpens.append(try sqliteSeconds(folder + "/cache.sqlite", ["SELECT value FROM server_data WHERE path = '/notes/n5/'"]))
    }
    print(String(format: "cache: open a 10 MB cache and read one note from it, offline: %.2f ms (best of 5); sqlite3 opening it and reading the note's row: %.2f ms (ratio %.1f)",
                 opens.min()! * 1000, rawOpens.min()! * 1000, opens.min()! / rawOpens.min()!))

    // Offline writes: the repo never connects.
    let offline = folder + "-offline"
    defer { try? FileManager.default.removeItem(atPath: offline) }
    let repo = Repo(connector: { _, _ in NeverConnects() }, cache: try DiskCache(folder: offline))
    let burst = try await seconds {
        for i in 0..<n { try await repo.set(Path("queued/k\(i)"), Node(Double(i))) }
        _ = await repo.pendingUserWrites  // every write is on disk when this returns
    }
    let single = 500
    let one = try await seconds {
        for i in 0..<single {
            try await repo.set(Path("single/k\(i)"), Node(Double(i)))
            await repo.commitCacheNow()
        }
    }
    await repo.close()
    print(String(format: "cache: writes queued offline, each on disk before it counts: %.0f/s in a burst of %d (a script), %.0f/s one at a time (the prompt: one fsync each)",
                 Double(n) / burst, n, Double(single) / one))
    // The anchor: SQLite inserting rows as small, with the same journal: all in one
    // transaction, then one transaction (one fsync) each.
    let rawFile = folder + "-raw.sqlite"
    defer { for suffix in ["", "-wal", "-shm"] { unlink(rawFile + suffix) } }
    let setup = ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "CREATE TABLE IF NOT EXISTS w (id INTEGER PRIMARY KEY, v BLOB)"]
    let rawBurst = try sqliteSeconds(rawFile, setup + ["BEGIN"] + (0..<n).map { "INSERT INTO w (v) VALUES ('\($0)')" } + ["COMMIT"])
    let rawOne = try sqliteSeconds(rawFile, setup + (0..<single).map { "INSERT INTO w (v) VALUES ('\($0)')" })
    print(String(format: "cache: sqlite3 inserting as many rows: %.0f/s in one transaction, %.0f/s one transaction each (ratios %.2f, %.2f)",
                 Double(n) / rawBurst, Double(single) / rawOne, burst / rawBurst, one / rawOne))

    // The alternative store for the queue: the engine's own log (append-only, group commit),
    // the same writes acknowledged by an embedded database through the same client.
    let engineFolder = folder + "-engine"
    defer { try? FileManager.default.removeItem(atPath: engineFolder) }
    let engine = try Database(folder: engineFolder)
    defer { engine.close() }
    let engineRepo = connect(engine)
    let engineBurst = try await seconds {
        var writes: [PendingWrite] = []
        for i in 0..<n { writes.append(try await engineRepo.set(Path("queued/k\(i)"), Node(Double(i)))) }
        for write in writes { try await write.acknowledged() }
    }
    let engineOne = try await seconds {
        for i in 0..<single { try await engineRepo.set(Path("single/k\(i)"), Node(Double(i))).acknowledged() }
    }
    await engineRepo.close()
    print(String(format: "cache: the same writes made durable by the engine's log instead: %.0f/s in a burst, %.0f/s one at a time (SQLite/log: %.2f, %.2f)",
                 Double(n) / engineBurst, Double(single) / engineOne, engineBurst / burst, engineOne / one))
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Seconds for SQLite to open `file`, run `statements` one by one and close it.
func sqliteSeconds(_ file: String, _ statements: [String]) throws -> Double {
    try seconds {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(file, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            sqlite3_close(handle)
            throw BenchmarkError("cannot open \(file)")
        }
        defer { sqlite3_close(handle) }
        for statement in statements {
            var prepared: OpaquePointer?
            guard sqlite3_prepare_v2(handle, statement, -1, &prepared, nil) == SQLITE_OK else { throw BenchmarkError(String(cString: sqlite3_errmsg(handle))) }
            while sqlite3_step(prepared) == SQLITE_ROW {}
            sqlite3_finalize(prepared)
        }
    }
}

/// A transport whose connection never comes up: the client stays offline.
final class NeverConnects: Transport {
    func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {}
    func send(_ message: Message) {}
    func close() {}
}

/// Counts events on the client core's queue; read after they are delivered.
/// `@unchecked Sendable`: guarded by `lock`, which the compiler cannot see.
final class EventCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var seen = 0
    @discardableResult
    func add() -> Int { lock.withLock { seen += 1; return seen } }
    var count: Int { lock.withLock { seen } }
}

/// Done after `count` ticks.
final class Countdown: Sendable {
    let done = OneShot<Void>()
    private let ticks = EventCounter()
    private let count: Int
    init(_ count: Int) { self.count = count }
    func tick() { if ticks.add() == count { done.succeed() } }
}

/// The prompt's styling of a 10 KB line as it is typed (each key draws the line again): a
/// JSON value, and a line of 1,000 flags. The anchor: Foundation's JSONSerialization reading
/// the same value. The goal: under 1 ms a line.
func highlightBenchmark(rounds: Int) {
    var members: [String] = []
    var size = 0
    while size < 10_000 {
        let member = #""k\#(members.count)": {"name": "n\#(members.count)", "at": now(), "n": \#(members.count), "ok": true}"#
        members.append(member)
        size += member.utf8.count + 2
    }
    let value = "{" + members.joined(separator: ", ") + "}"
    let setLine = "set /bench/value " + value
    var flagLine = "query /bench"
    while flagLine.utf8.count < 10_000 { flagLine += " --limitToFirst 5 --orderByChild name" }
    let json = Data(value.replacingOccurrences(of: "now()", with: "1").utf8)
    var sink = 0
    func perLine(_ body: () -> Void) -> Double { seconds { for _ in 0..<rounds { body() } } / Double(rounds) }
    let set = perLine { sink &+= LineHighlighter.highlight(setLine).utf8.count }
    let flags = perLine { sink &+= LineHighlighter.highlight(flagLine).utf8.count }
    let parse = perLine { sink &+= ((try? JSONSerialization.jsonObject(with: json)) as? [String: Any])?.count ?? 0 }
    print(String(format: "highlight: a %.1f KB set line %.0f µs, a %.1f KB line of flags %.0f µs (goal: under 1,000 µs); "
                 + "JSONSerialization reading the value %.0f µs (ratio %.2f)%@",
                 Double(setLine.utf8.count) / 1000, set * 1e6, Double(flagLine.utf8.count) / 1000, flags * 1e6, parse * 1e6, set / parse,
                 sink == 0 ? "" : ""))
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "json": try jsonBenchmark()
case "highlight": highlightBenchmark(rounds: Int(arguments.dropFirst().first ?? "") ?? 200)
case "json-reader":
    // JSONReader alone (keeping the text as a document), for a profiler (perf record).
    let bytes = Array(sampleDocument(10_000).utf8)
    let rounds = Int(arguments.dropFirst().first ?? "") ?? 100
    let time = try seconds { for _ in 0..<rounds { _ = try JSONReader.parse(data: bytes) } }
    print(String(format: "json-reader: %.0f MB/s", Double(bytes.count * rounds) / 1_000_000 / time))
case "json-writer":
    // JSONWriter alone, for a profiler.
    let node = try JSONReader.parse(data: Array(sampleDocument(10_000).utf8))
    let rounds = Int(arguments.dropFirst().first ?? "") ?? 100
    var written = 0
    let time = seconds { for _ in 0..<rounds { written += JSONWriter.bytes(node).count } }
    print(String(format: "json-writer: %.0f MB/s", Double(written) / 1_000_000 / time))
case "load": try await loadBenchmark(Int(arguments.dropFirst().first ?? "") ?? 1_000_000)
case "open": try openBenchmark(arguments[1])
case "stores": try storesBenchmark(Int(arguments.dropFirst().first ?? "") ?? 1_000_000)
case "big": try bigDatabase(arguments[1], leaves: Int(arguments.dropFirst(2).first ?? "") ?? 10_000_000)
case "latency": try await latencyBenchmark(2000)
case "network": try await networkBenchmark()
case "network-writes": try await networkBenchmark(writesOnly: true)
case "reconnect": try await reconnectBenchmark(Int(arguments.dropFirst().first ?? "") ?? 10_000)
case "tls": try await tlsBenchmark(Int(arguments.dropFirst().first ?? "") ?? 100_000)
case "query":
    // `query N WRITES`: one size, for a profiler.
    let sizes = Int(arguments.dropFirst().first ?? "").map { [$0] } ?? [10_000, 100_000, 1_000_000]
    let writes = Int(arguments.dropFirst(2).first ?? "") ?? 100_000
    for n in sizes { try await queryBenchmark(n, writes: writes) }
case "index-updates": indexUpdatesBenchmark(Int(arguments.dropFirst().first ?? "") ?? 1_000_000, updates: Int(arguments.dropFirst(2).first ?? "") ?? 100_000)
case "tree-writes":
    // `tree-writes N WRITES BATCH`: the data tree alone, for a profiler.
    let n = Int(arguments.dropFirst().first ?? "") ?? 1_000_000, writes = Int(arguments.dropFirst(2).first ?? "") ?? 100_000
    let batch = Int(arguments.dropFirst(3).first ?? "") ?? 1
    guard n >= 1, writes >= 0, batch >= 1 else {
        FileHandle.standardError.write(Data("tree-writes: N (children, at least 1), WRITES (0 or more) and BATCH (at least 1)\n".utf8))
        exit(2)
    }
    treeWritesBenchmark(n, writes: writes, batch: batch)
case "child-bytes":
    // `child-bytes N [SHAPE]`: each shape in a process of its own, or the one given.
    try childBytesBenchmark(Int(arguments.dropFirst().first ?? "") ?? 1_000_000, shape: arguments.dropFirst(2).first.flatMap { Int($0) })
case "writes": try await writeBenchmark(Int(arguments.dropFirst().first ?? "") ?? 100_000)
case "stages":
    // The pipelined-writes rows with each stage's busy time (the clock reads the variable once).
    setenv("RTDB_STAGE_TIMES", "1", 1)
    try await writeBenchmark(100_000)
    try await networkBenchmark(writesOnly: true)
case "cache": try await cacheBenchmark(Int(arguments.dropFirst().first ?? "") ?? 20_000)
case "monitor": try await monitorBenchmark(Int(arguments.dropFirst().first ?? "") ?? 100_000, rounds: Int(arguments.dropFirst(2).first ?? "") ?? 3)
case "snapshots":
    for n in Int(arguments.dropFirst().first ?? "").map({ [$0] }) ?? [10_000, 100_000, 1_000_000] { try snapshotsBenchmark(n) }
case "rules": try await rulesBenchmark(Int(arguments.dropFirst().first ?? "") ?? 50_000, rounds: Int(arguments.dropFirst(2).first ?? "") ?? 3)
default:
    try jsonBenchmark()
    highlightBenchmark(rounds: 200)
    try childBytesBenchmark(1_000_000, shape: nil)
    for n in [10_000, 100_000, 1_000_000] { try await queryBenchmark(n, writes: 100_000) }
    try await latencyBenchmark(2000)
    try await networkBenchmark()
    try await tlsBenchmark(100_000)
    try await reconnectBenchmark(10_000)
    try await writeBenchmark(100_000)
    try await monitorBenchmark(100_000)
    try await rulesBenchmark(50_000)
    try await cacheBenchmark(20_000)
    try await loadBenchmark(1_000_000)
    try storesBenchmark(1_000_000)
    for n in [10_000, 100_000, 1_000_000] { try snapshotsBenchmark(n) }
}
