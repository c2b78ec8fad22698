import XCTest
@testable import RTDBData
@testable import RTDBEngine
import RTDBTestSupport

/// The index answers every query form exactly as sorting the whole list would.
final class QueryIndexTests: XCTestCase {
    func naive(_ params: QueryParams, _ node: Node) -> Node {
        var matching = params.index.sortedChildren(of: node).filter { params.matches(key: $0.key, node: $0.node) }
        if let limit = params.limit {
            matching = params.isViewFromLeft ? Array(matching.prefix(limit)) : Array(matching.suffix(limit))
        }
        return Node(children: ChildMap(unsorted: matching.map { ($0.key, $0.node) }))
    }

    func randomChild(_ rng: inout SeededRandom) -> Node {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: return Node(Double(Int.random(in: 0..<10, using: &rng)))
        case 1: return Node(["a", "b", "c"].randomElement(using: &rng)!)
        case 2: return Node(Bool.random(using: &rng))
        case 3: return Node(children: ChildMap(unsorted: [(ChildKey("age"), Node(Double(Int.random(in: 0..<5, using: &rng))))]),
                            priority: Bool.random(using: &rng) ? .number(Double(Int.random(in: 0..<3, using: &rng))) : nil)
        case 4: return Node(.string("x"), priority: .string(["p", "q"].randomElement(using: &rng)!))
        default: return Node(children: ChildMap(unsorted: [(ChildKey("name"), Node("n"))]))
        }
    }

    func randomParams(_ rng: inout SeededRandom) -> QueryParams {
        let indexes: [Index] = [.priority, .key, .value, .child(Path("age"))]
        var p = QueryParams().ordered(by: indexes.randomElement(using: &rng)!)
        func bound() -> Node {
            if p.index == .key { return Node(String(Int.random(in: 0..<30, using: &rng))) }
            return [Node(Double(Int.random(in: 0..<8, using: &rng))), Node("b"), Node(true), .empty].randomElement(using: &rng)!
        }
        func key() -> String? { p.index == .key || Bool.random(using: &rng) ? nil : String(Int.random(in: 0..<30, using: &rng)) }
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: p = p.startAt(bound(), key: key())
        case 1: p = p.startAfter(bound(), key: key())
        case 2: p = p.equalTo(bound(), key: key())
        default: break
        }
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: p = p.endAt(bound(), key: key())
        case 1: p = p.endBefore(bound(), key: key())
        default: break
        }
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: p = p.limitToFirst(Int.random(in: 1..<6, using: &rng))
        case 1: p = p.limitToLast(Int.random(in: 1..<6, using: &rng))
        default: break
        }
        return p
    }

    /// A write to a child that leaves its ordering value as it was leaves the index's tree
    /// as it was; one that changes it moves the child.
    func testWritesThatKeepTheOrderingValueLeaveTheIndexAlone() {
        func note(_ modified: Double, _ title: String) -> Node {
            Node(children: ChildMap(unsorted: [(ChildKey("modified"), Node(modified)), (ChildKey("title"), Node(title))]))
        }
        var list = Node.empty
        for i in 0..<40 { list = list.updatingChild(ChildKey("n\(i)"), note(Double(i % 7), "t\(i)")) }
        var index = QueryIndex(path: .root, index: .child(Path("modified")), node: list)
        let params = QueryParams().ordered(by: .child(Path("modified"))).limitToLast(3)
        let before = index.entries

        let retitled = list.updatingChild(ChildKey("n5"), note(5, "renamed"))
        index.update(ChildKey("n5"), old: list.child(ChildKey("n5")), new: retitled.child(ChildKey("n5")))
        XCTAssertTrue(index.entries.sameStorage(as: before))
        XCTAssertEqual(index.evaluate(params, on: retitled), naive(params, retitled))

        let moved = retitled.updatingChild(ChildKey("n5"), note(9, "renamed"))
        index.update(ChildKey("n5"), old: retitled.child(ChildKey("n5")), new: moved.child(ChildKey("n5")))
        XCTAssertFalse(index.entries.sameStorage(as: before))
        XCTAssertEqual(index.evaluate(params, on: moved).children.keys.map(\.name), ["n34", "n5", "n6"])
        XCTAssertEqual(index.evaluate(params, on: moved), naive(params, moved))

        // Ordered by value, the children are objects, which all sort alike: the entry takes
        // the new object rather than keeping the old one alive.
        var byValue = QueryIndex(path: .root, index: .value, node: moved)
        let kept = byValue.entries
        byValue.update(ChildKey("n7"), old: moved.child(ChildKey("n7")), new: note(0, "other"))
        XCTAssertFalse(byValue.entries.sameStorage(as: kept))
        XCTAssertEqual(byValue.entries.find(IndexEntry(value: note(0, "other"), key: ChildKey("n7")))?.value, note(0, "other"))
    }

    func testIndexMatchesNaiveEvaluationUnderWrites() {
        var rng = SeededRandom.forTest()
        for _ in 0..<40 {
            var node = Node.empty
            for i in 0..<30 where Bool.random(using: &rng) { node = node.updatingChild(ChildKey(String(i)), randomChild(&rng)) }
            let params = randomParams(&rng)
            var index = QueryIndex(path: .root, index: params.index, node: node)
            var previous = index.evaluate(params, on: node)
            for _ in 0..<30 {
                XCTAssertEqual(index.evaluate(params, on: node), naive(params, node), "\(params)")
                let key = ChildKey(String(Int.random(in: 0..<30, using: &rng)))
                let new = Int.random(in: 0..<4, using: &rng) == 0 ? Node.empty : randomChild(&rng)
                index.update(key, old: node.child(key), new: new)
                node = node.updatingChild(key, new)
                // As a watched query is answered after a write: the other children from the
                // last answer, the written one looked up.
                let reused = index.evaluate(params, on: node, reusing: previous) { $0 == key }
                XCTAssertEqual(reused, naive(params, node), "\(params) after writing \(key)")
                previous = reused
            }
        }
    }
}
