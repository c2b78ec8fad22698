import Foundation
import XCTest
@testable import RTDBData

final class NodeFileTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "rtdb-nodes-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: folder) }

    /// Stores `node` in file `id` after `length` bytes; returns the head's root bytes and the new length.
    private func store(_ node: Node, id: Int = 1, after length: Int = 0) throws -> (root: [UInt8], length: Int, records: Int) {
        // Another number is another file, as in a data folder (truncating a mapped file would
        // pull the pages from under its readers).
        let writer = try NodeFileWriter(path: folder + "/nodes" + (id == 1 ? "" : "-\(id)"), id: id, appendingAt: length)
        let root = try writer.store(node)
        return (root, try writer.finish(), writer.records)
    }

    private func open(_ length: Int, id: Int = 1, onDamage: @escaping @Sendable (String) -> Void = { _ in }) throws -> NodeFile {
        try NodeFile(path: folder + "/nodes", id: id, length: length, onDamage: onDamage)
    }

    private func sample() throws -> Node {
        var list: [(ChildKey, Node)] = []
        for i in 0..<3000 {
            list.append((ChildKey("k\(i)"), try JSONReader.parse(#"{"n": \#(i), "s": "é\#u{1F600}\#(i)", "b": \#(i % 2 == 0), "z": -0.0}"#)))
        }
        let nested = try JSONReader.parse(#"{"a": {".priority": 2.5, "b": {".value": "x", ".priority": "p"}}, "10": 1, "9": 2, "-1": true, "big": 1.7976931348623157e308}"#)
        return Node(children: ChildMap(unsorted: list)).updatingChild(ChildKey("meta"), nested).withPriority(.string("top"))
    }

    func testRoundTripReadsOnlyWhatIsVisited() throws {
        let node = try sample()
        let written = try store(node)
        let file = try open(written.length)
        let read = try XCTUnwrap(file.node(encoded: written.root))
        XCTAssertEqual(read, node)
        XCTAssertEqual(JSONWriter.string(read), JSONWriter.string(node))
        XCTAssertEqual(read.hashString, node.hashString)
        XCTAssertEqual(read.childCount, 3001)
        XCTAssertTrue(read.children.checkInvariants())
        XCTAssertEqual(read.child(at: Path("meta/a/b")), Node(.string("x"), priority: .string("p")))
        XCTAssertEqual(read.child(at: Path("k2999/s")), Node("é\u{1F600}2999"))
        XCTAssertTrue(read.child(at: Path("k3000")).isEmpty)
        // Order-based reads of the stored list agree with the list in memory.
        for i in stride(from: 0, to: 3001, by: 97) {
            XCTAssertEqual(read.children.element(at: i).key, node.children.element(at: i).key)
        }
        XCTAssertEqual(read.children.rank(of: ChildKey("k5")), node.children.rank(of: ChildKey("k5")))
        XCTAssertEqual(read.children.first?.key, node.children.first?.key)
        XCTAssertEqual(read.children.last?.key, node.children.last?.key)
        XCTAssertEqual(read.priority, .string("top"))
    }

    /// A document's big containers are stored as they are read, in one pass: the same tree
    /// as the value read whole.
    func testADocumentIsStoredAsTheValueReadWhole() throws {
        let text = "{\"list\": [" + (0..<5000).map { $0 % 3 == 0 ? "{\"n\": \($0)}" : String($0) }.joined(separator: ",")
            + "], \"map\": {" + (0..<300).map { "\"k\($0)\": [\($0), \"x\"]" }.joined(separator: ",") + "}}"
        var options = JSONReader.Options()
        options.documentsFrom = 0
        let document = try JSONReader.parse(data: Array(text.utf8), options: options)
        XCTAssertTrue(document.child(ChildKey("list")).children.isValidatedText)
        let whole = try JSONReader.parse(text)
        let written = try store(document)
        let read = try XCTUnwrap(try open(written.length).node(encoded: written.root))
        XCTAssertEqual(read, whole)
        XCTAssertTrue(read.child(ChildKey("list")).children.checkInvariants())
        XCTAssertEqual(read.child(at: Path("list/4998/n")), Node(4998))
        XCTAssertEqual(read.child(at: Path("map/k299/1")), Node("x"))
    }

    /// A write to a stored tree copies the branches on its path; storing it again appends
    /// those only, and the earlier length still reads the earlier tree.
    func testAppendWritesOnlyWhatChanged() throws {
        let node = try sample()
        let first = try store(node)
        let file = try open(first.length)
        let read = try XCTUnwrap(file.node(encoded: first.root))
        let changed = read.setting(Path("k1500/n"), to: Node(-1)).setting(Path("k7"), to: .empty).setting(Path("new/x"), to: Node("y"))
        let expected = node.setting(Path("k1500/n"), to: Node(-1)).setting(Path("k7"), to: .empty).setting(Path("new/x"), to: Node("y"))
        XCTAssertEqual(changed, expected)
        let second = try store(changed, after: first.length)
        XCTAssertLessThan(second.records, 80, "a few paths of a 3,000-child list, not the list")
        XCTAssertGreaterThan(first.records, 3000 * 5)
        let later = try open(second.length)
        XCTAssertEqual(later.node(encoded: second.root), expected)
        XCTAssertEqual(try open(first.length).node(encoded: first.root), node)
        // A new file copies everything.
        let copy = try store(changed, id: 2)
        XCTAssertGreaterThan(copy.records, 3000 * 5)
    }

    /// Every byte flipped, with the record's checksum made to match again (a hostile file, not
    /// only a damaged one): reading never traps or loops, and damage reads as stand-ins.
    func testHostileBytesNeverTrap() throws {
        let node = try JSONReader.parse(#"{"a": {"b": 1, "c": [1, 2, 3]}, "d": "text", "e": {".priority": 1, "f": true}}"#)
        let written = try store(node)
        let pristine = try readBytes(folder + "/nodes")
        var offset = NodeFile.headerSize
        var records: [(start: Int, length: Int)] = []
        while offset + 8 <= pristine.count {
            let length = Int(pristine[offset]) | Int(pristine[offset + 1]) << 8 | Int(pristine[offset + 2]) << 16 | Int(pristine[offset + 3]) << 24
            records.append((offset + 8, length))
            offset += 8 + length
        }
        XCTAssertEqual(offset, pristine.count)
        var standIns = 0
        for record in records {
            for i in 0..<record.length {
                for mask: UInt8 in [0x01, 0xFF] {
                    var bytes = pristine
                    bytes[record.start + i] ^= mask
                    let crc = bytes.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[record.start..<(record.start + record.length)])) }
                    for k in 0..<4 { bytes[record.start - 4 + k] = UInt8(truncatingIfNeeded: crc >> (8 * k)) }
                    try Data(bytes).write(to: URL(fileURLWithPath: folder + "/nodes"))
                    guard let read = try open(written.length).node(encoded: written.root) else { continue }
                    let text = JSONWriter.string(read)
                    if text.contains(".damaged-") { standIns += 1 }
                    walk(read)
                }
            }
        }
        XCTAssertGreaterThan(standIns, 0)
        // Plain damage (the checksum left as it was) is told once per record.
        var bytes = pristine
        bytes[records[0].start] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/nodes"))
        let told = Told()
        let read = try XCTUnwrap(try open(written.length, onDamage: { told.add($0) }).node(encoded: written.root))
        walk(read)
        walk(read)
        XCTAssertEqual(told.messages.count, 1)
        XCTAssertTrue(told.messages[0].contains("damaged at byte \(NodeFile.headerSize): checksum mismatch"), told.messages[0])
    }

    /// Every way a reader looks at a tree.
    private func walk(_ node: Node) {
        let map = node.children
        for i in 0..<map.count { _ = map.element(at: i) }
        for (key, child) in map {
            _ = map[key]
            _ = map.rank(of: key)
            walk(child)
        }
        _ = map.first
        _ = map.last
        _ = node.hashString
        _ = map.removing(ChildKey("a")).inserting(ChildKey("zz"), Node(1)).count
    }

    /// A damaged branch read into a tree is never stored as data by an ordinary append; a
    /// salvaging copy leaves it out, and a node all of whose children were damaged with it.
    func testDamageIsNeverStoredAsData() throws {
        let node = try JSONReader.parse(#"{"a": {"only": 1}, "b": 2, "c": 3}"#)
        let written = try store(node)
        var bytes = try readBytes(folder + "/nodes")
        bytes[NodeFile.headerSize + 12] ^= 0x01  // the first record: /a's only child
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/nodes"))
        let read = try XCTUnwrap(try open(written.length).node(encoded: written.root))
        XCTAssertEqual(JSONWriter.string(read), #"{"a":{".damaged-16":"unreadable"},"b":2,"c":3}"#)
        let changed = read.setting(Path("a/x"), to: Node(1))
        XCTAssertThrowsError(try store(changed, after: written.length)) { XCTAssertTrue("\($0)".contains("run --recover"), "\($0)") }
        let writer = try NodeFileWriter(path: folder + "/nodes-2", id: 2, appendingAt: 0)
        writer.dropDamaged = true
        let root = try writer.store(read)
        let copy = try NodeFile(path: folder + "/nodes-2", id: 2, length: try writer.finish())
        XCTAssertEqual(copy.node(encoded: root).map { JSONWriter.string($0) }, #"{"b":2,"c":3}"#)
    }

    /// A value read from one file and written into another file of the same number (two
    /// databases in one process) is copied, never linked to offsets of the first.
    func testAnotherFileIsCopiedNotLinked() throws {
        let node = try sample()
        let written = try store(node)
        let read = try XCTUnwrap(try open(written.length).node(encoded: written.root))
        try FileManager.default.createDirectory(atPath: folder + "/other", withIntermediateDirectories: true)
        let writer = try NodeFileWriter(path: folder + "/other/nodes", id: 1, appendingAt: 0)
        let root = try writer.store(read.setting(Path("k1/n"), to: Node(0)))
        let length = try writer.finish()
        XCTAssertGreaterThan(writer.records, 3000 * 5)
        try FileManager.default.removeItem(atPath: folder + "/nodes")
        let other = try NodeFile(path: folder + "/other/nodes", id: 1, length: length)
        XCTAssertEqual(other.node(encoded: root), node.setting(Path("k1/n"), to: Node(0)))
    }

    func testNotANodeFileIsRefused() throws {
        try Data("RTDBNODE\u{2}\0\0\0\0\0\0\0".utf8).write(to: URL(fileURLWithPath: folder + "/nodes"))
        XCTAssertThrowsError(try open(16)) { XCTAssertTrue("\($0)".contains("format version 2"), "\($0)") }
        try Data(repeating: 0, count: 64).write(to: URL(fileURLWithPath: folder + "/nodes"))
        XCTAssertThrowsError(try open(64)) { XCTAssertTrue("\($0)".contains("not a node file"), "\($0)") }
        XCTAssertThrowsError(try open(100)) { XCTAssertTrue("\($0)".contains("shorter"), "\($0)") }
    }
}

private final class Told: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ message: String) { lock.lock(); list.append(message); lock.unlock() }
    var messages: [String] { lock.lock(); defer { lock.unlock() }; return list }
}

private func readBytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
