import RTDBData
import RTDBProtocol

/// Cuts a JSON document, read forwards from a file, into writes of at most `chunk` bytes of
/// JSON, so that a file of any size imports in the memory of one write.
///
/// A document that fits in one write is one write: atomic. A larger one is descended into
/// until its parts fit: a replacing import first sets the target to the document's first
/// part, then adds the rest with updates below it; `merge` (as `update` does) replaces each
/// top-level child the same way and leaves the target's other children. Either way the end
/// state is the file, and running the same import again converges to it: that is what an
/// interrupted import is left to do. A value is parsed by `JSONReader` (one source of the
/// database's JSON rules); only the objects and arrays too large for a write are read here.
@MainActor
final class ImportSplitter {
    typealias Emit = (ImportWrite) async throws -> Void

    private let target: Path
    private let merge: Bool
    private let chunk: Int
    private let whole: Int
    /// What a write gathers before it is sent: `chunk`, or everything when the whole
    /// document fits in one write.
    private var budget: Int
    private let window: ByteWindow
    private let emit: Emit
    private var batch = Batch()
    /// How far the file has been read (for progress).
    private(set) var position = 0
    var onProgress: ((Int) -> Void)?

    /// `whole`: a document up to this size is one write; a larger one is cut into writes of
    /// about `chunk` bytes.
    init(target: Path, merge: Bool, chunk: Int, whole: Int, window: ByteWindow, emit: @escaping Emit) {
        self.target = target
        self.merge = merge
        self.chunk = chunk
        self.whole = whole
        budget = chunk
        self.window = window
        self.emit = emit
    }

    /// The entries of the write being gathered. An entry for an object too large to write
    /// whole starts empty (replacing what was there) and takes its first children in.
    private struct Batch {
        var entries: [(path: Path, node: Node)] = []
        var positions: [Path: Int] = [:]
        var bytes = 0
        var isEmpty: Bool { entries.isEmpty }

        mutating func add(_ path: Path, _ node: Node, bytes: Int) {
            self.bytes += bytes
            var keys = path.keys
            while true {
                if let i = positions[Path(keys: keys)] {
                    entries[i].node = entries[i].node.setting(Path(keys: Array(path.keys[keys.count...])), to: node)
                    return
                }
                if keys.isEmpty { break }
                keys.removeLast()
            }
            positions[path] = entries.count
            entries.append((path, node))
        }
    }

    func run() async throws {
        var at = try window.skipWhitespace(0, release: true)
        window.keep = at
        guard let first = try window.byte(at) else { throw ShellError("\(window.location(at)): the file is empty: expected a JSON value") }
        if try window.endOfValue(at, limit: whole) != nil { budget = .max }
        if merge {
            guard first == UInt8(ascii: "{") else {
                throw error(at, "import --merge needs a JSON object (its keys are the children to replace), found \(JSONReader.describe(first))")
            }
            at = try await members(of: .root, from: at, reset: false)
        } else {
            at = try await value(at: .root, from: at)
        }
        at = try window.skipWhitespace(at, release: true)
        if let extra = try window.byte(at) { throw error(at, "unexpected \(JSONReader.describe(extra)) after the value") }
        try await flush()
    }

    /// Reads the value at `start` (for the child `path` of the target); returns where it ends.
    private func value(at path: Path, from start: Int) async throws -> Int {
        window.keep = start
        guard let first = try window.byte(start) else { throw error(start, "expected a value, found end of input") }
        if let end = try window.endOfValue(start, limit: min(budget, ImportSplitter.largestWrite)) {
            try await add(path, try parse(start..<end, at: path), bytes: end - start)
            return end
        }
        let descend = try first == UInt8(ascii: "[") || (first == UInt8(ascii: "{") && !wrapsALeaf(start))
        if descend {
            return try await members(of: path, from: start, reset: true)
        }
        // A long string, or a value with its priority: whole, if a write can hold it.
        guard let end = try window.endOfValue(start, limit: ImportSplitter.largestWrite) else {
            throw error(start, "the value at \(target.appending(path)) is larger than a write may be (16 MB)")
        }
        try await add(path, try parse(start..<end, at: path), bytes: end - start)
        return end
    }

    /// The most one write may carry, with room for the message around it.
    nonisolated static let largestWrite = ValueParser.maxWriteBytes - (64 << 10)

    /// Whether the object at `start` is a value with a priority or a server value
    /// (`.value` or `.sv` among its first two keys), which is written whole.
    private func wrapsALeaf(_ start: Int) throws -> Bool {
        var at = try window.skipWhitespace(start + 1)
        for _ in 0..<2 {
            guard try window.byte(at) == UInt8(ascii: "\"") else { return false }
            let (key, after) = try readKey(at)
            if key == ".value" || key == ".sv" { return true }
            guard key == ".priority" else { return false }
            at = try window.skipWhitespace(after)
            guard try window.byte(at) == UInt8(ascii: ":") else { return false }
            at = try window.skipWhitespace(at + 1)
            guard let end = try window.endOfValue(at, limit: 1 << 16) else { return false }
            at = try window.skipWhitespace(end)
            guard try window.byte(at) == UInt8(ascii: ",") else { return false }
            at = try window.skipWhitespace(at + 1)
        }
        return false
    }

    /// Reads an object or array too large for one write, member by member; `reset` first
    /// empties its location (the members then build it again).
    private func members(of path: Path, from start: Int, reset: Bool) async throws -> Int {
        let isArray = try window.byte(start) == UInt8(ascii: "[")
        let close = isArray ? UInt8(ascii: "]") : UInt8(ascii: "}")
        if reset { try await add(path, .empty, bytes: 2) }
        var at = try window.skipWhitespace(start + 1)
        if try window.byte(at) == close { return at + 1 }
        var position = 0
        var priority: LeafValue?
        while true {
            at = try window.skipWhitespace(at, release: true)
            window.keep = at
            if isArray {
                at = try await value(at: try child(path, String(position), at: at), from: at)
                position += 1
            } else {
                guard try window.byte(at) == UInt8(ascii: "\"") else {
                    throw error(at, "expected a key in double quotes, found \(JSONReader.describe(try window.byte(at)))")
                }
                let keyStart = at
                let (key, after) = try readKey(at)
                at = try window.skipWhitespace(after)
                guard try window.byte(at) == UInt8(ascii: ":") else { throw error(at, "expected ':' after the key, found \(JSONReader.describe(try window.byte(at)))") }
                at = try window.skipWhitespace(at + 1)
                if key == ".priority" {
                    window.keep = at
                    guard let end = try window.endOfValue(at, limit: 1 << 16) else { throw error(at, "the priority is too long") }
                    let node = try parse(at..<end, at: path)
                    // null: no priority, as JSONReader reads it in a smaller object.
                    guard node.isEmpty || (node.leafValue.map { $0 != .bool(true) && $0 != .bool(false) } ?? false) else {
                        throw error(at, DataError.invalidPriority(path: target.appending(path).description, reason: "a priority must be a string or a number").description)
                    }
                    priority = node.leafValue
                    at = end
                } else {
                    at = try await value(at: try child(path, key, at: keyStart), from: at)
                }
            }
            at = try window.skipWhitespace(at, release: true)
            guard let b = try window.byte(at) else {
                throw error(at, isArray ? "unterminated array: expected ',' or ']'" : "unterminated object: expected ',' or '}'")
            }
            if b == UInt8(ascii: ",") { at += 1; continue }
            if b == close { at += 1; break }
            throw error(at, "expected ',' or '\(isArray ? "]" : "}")' in \(isArray ? "array" : "object"), found \(JSONReader.describe(b))")
        }
        if let priority {
            // After the children, which may be in the batch: the priority of what they built.
            try await flush()
            try await emit(.set(target.appending(path).child(".priority"), Node(priority)))
        }
        return at
    }

    /// The key `key` below `path`, checked as the database checks keys.
    private func child(_ path: Path, _ key: String, at offset: Int) throws -> Path {
        let child = path.child(key)
        let full = target.appending(child)
        if let reason = Path.problem(with: key) {
            throw error(offset, DataError.invalidKey(key: key, path: full.description, reason: reason).description)
        }
        do { try full.validateSize() } catch { throw self.error(offset, "\(error)") }
        return child
    }

    /// A key in double quotes at `offset`, and where it ends.
    private func readKey(_ offset: Int) throws -> (String, Int) {
        guard let end = try window.endOfValue(offset, limit: 64 << 10) else { throw error(offset, "a key is too long") }
        guard case .leaf(.string(let key)) = try parse(offset..<end, at: .root).content else {
            throw error(offset, "expected a key in double quotes")
        }
        return (key, end)
    }

    private func parse(_ range: Range<Int>, at path: Path) throws -> Node {
        try window.withBytes(range) { bytes in
            do {
                return try JSONReader.parse(bytes: bytes, options: .init(base: target.appending(path)))
            } catch let e as JSONParseError {
                throw error(range.lowerBound + e.offset, e.message)
            }
        }
    }

    private func add(_ path: Path, _ node: Node, bytes value: Int) async throws {
        // Ctrl-C stops an import between two values, not at the next write.
        try Task.checkCancellation()
        // The entry's path and its punctuation count too ("a/b/key":value,).
        let bytes = value + path.keys.reduce(0) { $0 + $1.utf8.count + 1 } + 3
        if !batch.isEmpty && batch.bytes + bytes > budget { try await flush() }
        batch.add(path, node, bytes: bytes)
        position = window.keep + value
        onProgress?(position)
    }

    /// Sends what is gathered: the target whole, or an update below it.
    private func flush() async throws {
        guard !batch.isEmpty else { return }
        let entries = batch.entries, counted = batch.bytes
        batch = Batch()
        try await send(entries[...], counted: counted)
    }

    /// Written out, a value can take up to six times its room in the file (`1e20` is 21
    /// digits, a raw DEL byte is `\u007f`): a write that could pass the limit is measured
    /// as sent, and halved until it does not.
    private func send(_ entries: ArraySlice<(path: Path, node: Node)>, counted: Int) async throws {
        if counted > ImportSplitter.largestWrite / 6 {
            let size = entries.reduce(0) { $0 + JSONWriter.bytes($1.node).count + $1.path.wireString.utf8.count + 4 }
            if size > ImportSplitter.largestWrite {
                guard entries.count > 1 else {
                    let path = target.appending(entries.first?.path ?? .root)
                    throw ShellError("the value at \(path) is \(Outline.humanBytes(size)) written out (numbers and characters take more room than in the file), more than a write may carry (16 MB): import it with a smaller --chunk-size")
                }
                let half = entries.startIndex + entries.count / 2
                try await send(entries[..<half], counted: counted / 2)
                try await send(entries[half...], counted: counted - counted / 2)
                return
            }
        }
        if entries.count == 1, let only = entries.first, only.path.isRoot {
            try await emit(.set(target, only.node))
        } else {
            try await emit(.update(target, entries.map { UpdateEntry($0.path, $0.node) }))
        }
    }

    private func error(_ offset: Int, _ message: String) -> ShellError {
        ShellError("\(window.location(offset)): \(message)")
    }
}
