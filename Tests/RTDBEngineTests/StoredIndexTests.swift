import Foundation
import XCTest
@testable import RTDBData
@testable import RTDBEngine
import RTDBProtocol

/// Query indexes are stored with the tree, so a big list is not indexed again at every open:
/// the stored index answers, follows writes, survives damage (built again) and the logs.
final class StoredIndexTests: XCTestCase {
    /// Objects sort last in value order: the six children whose score is one come first.
    let byScore = QueryParams().ordered(by: .child(Path("score"))).limitToLast(10)
    let key = QueryIndexes.key(Path("list"), .child(Path("score")))

    func put(_ database: Database, _ path: String, _ json: String) throws {
        let value = try JSONReader.parse(json)
        let done = DispatchSemaphore(value: 0)
        database.submit(.put(path: Path(path), data: value, hash: nil)) { response in
            XCTAssertEqual("\(response)", "\(Response.ok)")
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    }

    func read(_ database: Database, _ params: QueryParams) -> String {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var answer = ""
        database.read(Path("list"), query: params) { node in
            answer = JSONWriter.string(node)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        return answer
    }

    /// The ten highest scores, found by sorting the whole list.
    func expected(_ list: Node) -> String {
        let top = Index.child(Path("score")).sortedChildren(of: list).suffix(10)
        return JSONWriter.string(Node(children: ChildMap(unsorted: top.map { ($0.key, $0.node) })))
    }

    /// An index's entries as text (a stored one keeps only that a value is an object).
    func entries(_ index: QueryIndex?) -> [String] {
        index.map { $0.entries.map { "\($0.key.name)=\($0.value.isLeaf || $0.value.isEmpty ? JSONWriter.string($0.value) : "object")" } } ?? []
    }

    /// A list of 300 children, scores repeating (ties break by key), some without a score
    /// and some whose score is an object.
    func fill(_ database: Database) throws {
        var members: [String] = []
        for i in 0..<300 {
            let score = i % 50 == 7 ? #"{"a":1}"# : i % 40 == 3 ? "null" : String(i * 37 % 101)
            members.append(#""k\#(i)":{"score":\#(score),"name":"n\#(i)"}"#)
        }
        try put(database, "list", "{" + members.joined(separator: ",") + "}")
    }

    func testAStoredIndexAnswersAndFollowsWritesAfterReopening() throws {
        let folder = temporaryFolder()
        var database = try Database(folder: folder)
        try fill(database)
        XCTAssertEqual(read(database, byScore), expected(database.value(at: Path("list"))))
        database.close()

        var store = try Store(folder: folder)
        XCTAssertEqual(store.recoveredIndexes[key]?.isStored, true)
        XCTAssertEqual(store.recoveredIndexes[key]?.count, 300)
        store.close()

        database = try Database(folder: folder)
        XCTAssertEqual(read(database, byScore), expected(database.value(at: Path("list"))))
        try put(database, "list/k5/score", "1000")
        try put(database, "list/k11", "null")
        try put(database, "list/k12/score", #""text""#)
        try put(database, "list/new", #"{"score":999}"#)
        let list = database.value(at: Path("list"))
        XCTAssertEqual(read(database, byScore), expected(list))
        XCTAssertTrue(read(database, byScore).contains(#""k5":{"name":"n5","score":1000}"#))
        database.close()

        // Used since the open: stored again, as the data now is.
        store = try Store(folder: folder)
        XCTAssertEqual(entries(store.recoveredIndexes[key]), entries(QueryIndex(path: Path("list"), index: .child(Path("score")), node: list)))
        store.close()

        // An open that only reads keeps it.
        database = try Database(folder: folder)
        XCTAssertEqual(database.value(at: Path("list/k5/score")), Node(1000))
        database.close()
        store = try Store(folder: folder)
        XCTAssertEqual(store.recoveredIndexes[key]?.isStored, true)
        store.close()

        // An open that writes, in which no query used it, leaves it out at close.
        database = try Database(folder: folder)
        try put(database, "other", "1")
        database.close()
        store = try Store(folder: folder)
        XCTAssertNil(store.recoveredIndexes[key])
        store.close()
    }

    func testADamagedStoredIndexIsBuiltAgainFromTheData() throws {
        let folder = temporaryFolder()
        var database = try Database(folder: folder)
        try fill(database)
        let answer = read(database, byScore)
        database.close()

        // The index's top record gets a flipped byte: its checksum no longer matches.
        let head = try FolderHead.decode(FileIO.readFile(folder + "/HEAD"), path: "HEAD")
        let link = try XCTUnwrap(head.indexes.first)
        XCTAssertEqual(link.size, 300)
        let nodes = folder + "/" + Store.nodesName(head.nodesID)
        var bytes = try FileIO.readFile(nodes)
        bytes[link.offset + 12] ^= 0xFF
        try Store.writeFile(nodes, bytes)

        database = try Database(folder: folder)
        XCTAssertEqual(read(database, byScore), answer)
        database.close()
        let store = try Store(folder: folder)
        let list = store.recoveredRoot.child("list")
        XCTAssertEqual(entries(store.recoveredIndexes[key]), entries(QueryIndex(path: Path("list"), index: .child(Path("score")), node: list)))
        store.close()
    }

    /// Records logged after the checkpoint that stored an index are applied to it at open.
    func testTheLogIsAppliedToAStoredIndexAtOpen() throws {
        let folder = temporaryFolder()
        let database = try Database(folder: folder)
        try fill(database)
        _ = read(database, byScore)
        database.close()

        var store = try Store(folder: folder)
        store.checkpointOnClose = false  // as a killed process leaves its log
        var root = store.recoveredRoot, indexes = store.recoveredIndexes
        for (i, score) in [500, 3, 700].enumerated() {
            let record = LogRecord(sets: [(Path("list/k\(i * 10)/score"), Node(Double(score)))])
            Store.apply(record, to: &root, &indexes)
            let done = DispatchSemaphore(value: 0)
            store.append([(record, { @Sendable error in
                XCTAssertNil(error)
                done.signal()
            })]) { (root, indexes) }
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        }
        store.close(root: root, indexes: indexes)

        store = try Store(folder: folder)
        let recovered = store.recoveredIndexes[key]
        XCTAssertEqual(recovered?.isStored, true)
        XCTAssertEqual(entries(recovered), entries(QueryIndex(path: Path("list"), index: .child(Path("score")), node: root.child("list"))))
        store.close()
    }

    /// A write to the list's own priority is not a child of it; replacing the list makes the
    /// index be built again; indexes no listen uses are bounded.
    func testPriorityOfTheListReplacedListsAndIdleIndexes() throws {
        let folder = temporaryFolder()
        let database = try Database(folder: folder)
        defer { database.close() }
        try fill(database)
        XCTAssertEqual(read(database, byScore), expected(database.value(at: Path("list"))))
        try put(database, "list/.priority", "5")
        XCTAssertEqual(database.runAndWait { [key] in $0.indexes[key]?.count }, 300)
        XCTAssertEqual(read(database, byScore), expected(database.value(at: Path("list"))))
        try put(database, "list", #"{"a":{"score":2},"b":{"score":1},"c":{"score":3}}"#)
        XCTAssertEqual(database.runAndWait { [key] in $0.indexes[key]?.isStale }, true)
        XCTAssertEqual(read(database, byScore), #"{"a":{"score":2},"b":{"score":1},"c":{"score":3}}"#)
        XCTAssertEqual(read(database, byScore.limitToFirst(1)), #"{"b":{"score":1}}"#)

        for i in 0..<(Database.idleIndexLimit + 5) { _ = read(database, QueryParams().ordered(by: .child(Path("f\(i)"))).limitToFirst(1)) }
        XCTAssertEqual(database.runAndWait { $0.indexes.values.count }, Database.idleIndexLimit)
        // The oldest went first.
        XCTAssertFalse(database.runAndWait { [key] in $0.indexes[key] != nil })
        XCTAssertTrue(database.runAndWait { $0.indexes[QueryIndexes.key(Path("list"), .child(Path("f\(Database.idleIndexLimit + 4)")))] != nil })
    }

    func testTheHeadKeepsItsIndexesAndReadsTheFormatBefore() throws {
        let head = FolderHead(nodesID: 3, nodesLength: 4096, compactedLength: 2048, covered: 9, root: [5, 1, 2],
                              indexes: [.init(path: Path("users/list"), index: .child(Path("a/b")), offset: 100, size: 7),
                                        .init(path: .root, index: .value, offset: 200, size: 1)])
        XCTAssertEqual(try FolderHead.decode(head.encode(), path: "HEAD"), head)

        // Without indexes it is written as version 2 (the root runs to the checksum), which
        // an rtdb from before stored indexes opens.
        var bare = head
        bare.indexes = []
        let old = bare.encode()
        XCTAssertEqual(old[8], 2)
        XCTAssertEqual(old.count, 8 + 4 + 32 + 4 + 3 + 4)
        XCTAssertEqual(try FolderHead.decode(old, path: "HEAD"), bare)

        // A count of indexes the file cannot hold is refused, not allocated.
        var hostile = Array(head.encode()[..<51])
        hostile += [0xFF, 0xFF, 0xFF, 0x7F]
        hostile += CRC32.checksum(hostile).littleEndianBytes
        XCTAssertThrowsError(try FolderHead.decode(hostile, path: "HEAD")) { error in
            XCTAssertTrue("\(error)".contains("more indexes than the file holds"), "\(error)")
        }
    }
}

private extension UInt32 {
    var littleEndianBytes: [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: self >> (8 * $0)) } }
}
