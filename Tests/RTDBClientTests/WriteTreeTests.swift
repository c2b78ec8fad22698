import XCTest
import RTDBData
@testable import RTDBClient
import RTDBTestSupport

/// What the visible layer shows after a pending write leaves it, on the shortcut an
/// acknowledged merge beside other merges takes and on the full re-layering it falls back to,
/// and that a write nothing looked at leaves without being layered.
final class WriteTreeTests: XCTestCase {
    private func visible(_ tree: WriteTree, _ path: String) -> String {
        tree.visible.completeNode(at: Path(path)).map { JSONWriter.string($0) } ?? "-"
    }

    func testAnAcknowledgedMergeLeavesTheOtherMergesAtItsPath() {
        let tree = WriteTree()
        tree.addMerge(Path("list"), [(Path("k1"), Node(1)), (Path("k2"), Node(2))], id: 1)
        tree.addMerge(Path("list"), [(Path("k3"), Node(3)), (Path("k4/x"), Node(4))], id: 2)
        tree.layerPending()  // as a view shown them does
        XCTAssertEqual(tree.remove(id: 1)?.mayChangeViews, true)
        XCTAssertEqual(["k1", "k2", "k3", "k4/x"].map { visible(tree, "list/" + $0) }, ["-", "-", "3", "4"])
        XCTAssertEqual(tree.remove(id: 2)?.mayChangeViews, true)
        XCTAssertEqual(visible(tree, "list/k3"), "-")
        XCTAssertTrue(tree.visible.isEmpty)
    }

    func testAMergeUnderAnotherWriteIsLayeredAgain() {
        let tree = WriteTree()
        tree.addOverwrite(Path("list"), Node(json: .object([("k1", .number(0)), ("k9", .number(9))])), id: 1, visible: true)
        tree.addMerge(Path("list"), [(Path("k1"), Node(1)), (Path("k2"), Node(2))], id: 2)
        tree.addOverwrite(Path("list/k2/deep"), Node(5), id: 3, visible: true)
        tree.layerPending()
        // The merge goes: the overwrite below it and the one above it stay as they were.
        XCTAssertEqual(tree.remove(id: 2)?.mayChangeViews, true)
        XCTAssertEqual(visible(tree, "list"), #"{"k1":0,"k2":{"deep":5},"k9":9}"#)
        XCTAssertEqual(tree.remove(id: 1)?.mayChangeViews, true)
        XCTAssertEqual(visible(tree, "list/k1"), "-")
        XCTAssertEqual(visible(tree, "list/k2/deep"), "5")
    }

    func testAWriteNothingLookedAtLeavesWithoutChangingViews() {
        let tree = WriteTree()
        tree.addOverwrite(Path("a"), Node(1), id: 1, visible: true)
        tree.addOverwrite(Path("b"), Node(2), id: 2, visible: true)
        XCTAssertEqual(tree.remove(id: 1)?.mayChangeViews, false)
        // Once looked at, the rest is layered, and its leaving may change what views show.
        XCTAssertEqual(visible(tree, "b"), "2")
        tree.addOverwrite(Path("c"), Node(3), id: 3, visible: true)
        XCTAssertEqual(tree.remove(id: 2)?.mayChangeViews, true)
        XCTAssertEqual(visible(tree, "b"), "-")
        XCTAssertEqual(visible(tree, "c"), "3")
        XCTAssertEqual(tree.remove(id: 3)?.mayChangeViews, true)
        XCTAssertTrue(tree.visible.isEmpty)
    }

    /// Random writes, acknowledged oldest first as the server answers: the visible layer
    /// kept in place always shows what layering the remaining writes anew shows.
    func testTheVisibleLayerAlwaysEqualsTheWritesLayeredAnew() {
        var rng = SeededRandom(seed: 12)
        let keys = ["a", "b", "c"]
        func randomPath(_ depth: Int) -> Path { Path(keys: (0..<depth).map { _ in keys.randomElement(using: &rng)! }) }
        let base = Node(json: .object(keys.map { k in (k, .object(keys.map { ($0, .object([("x", .number(1))])) })) }))
        for round in 0..<600 {
            let tree = WriteTree()
            var log: [String] = []
            var live: [Int] = []
            for id in 1...12 {
                if !live.isEmpty && Int.random(in: 0..<3, using: &rng) == 0 {
                    // The server answers in order; a transaction's write may go at any time.
                    let gone = live.remove(at: Bool.random(using: &rng) ? 0 : Int.random(in: 0..<live.count, using: &rng))
                    log.append("remove \(gone)")
                    _ = tree.remove(id: gone)
                } else {
                    let path = randomPath(Int.random(in: 0...2, using: &rng))
                    // Some deletions: one of a leaf's child leaves the leaf as it is.
                    let value = Int.random(in: 0..<5, using: &rng) == 0 ? Node.empty : Node(Double(id))
                    if Bool.random(using: &rng) {
                        let entries = (0..<Int.random(in: 1...4, using: &rng)).map { _ in (randomPath(Int.random(in: 1...2, using: &rng)), value) }
                        log.append("merge \(id) at /\(path.keys.joined(separator: "/")): \(entries.map { $0.0.keys.joined(separator: "/") })")
                        tree.addMerge(path, entries, id: id)
                    } else {
                        let shown = Int.random(in: 0..<4, using: &rng) != 0  // a running transaction's is not
                        log.append("overwrite \(id) at /\(path.keys.joined(separator: "/"))\(shown ? "" : " (hidden)")")
                        tree.addOverwrite(path, value, id: id, visible: shown)
                    }
                    live.append(id)
                }
                // Looked at now and then, as views and reads do: writes nothing looked at
                // leave unlayered, and the layer caught up later must show the same.
                guard Int.random(in: 0..<3, using: &rng) == 0 else { continue }
                let expected = tree.layer(tree.writes, at: .root) { $0.visible }
                XCTAssertEqual(JSONWriter.string(tree.visible.apply(to: base)), JSONWriter.string(expected.apply(to: base)),
                               "round \(round): \(log.joined(separator: "; "))")
                if tree.writes.isEmpty { XCTAssertTrue(tree.visible.isEmpty, "round \(round): \(log.joined(separator: "; "))") }
            }
        }
    }

    func testPathCounterAnswersAsAListOfPathsDoes() {
        var rng = SeededRandom(seed: 7)
        let keys = ["a", "b"]
        func randomPath(_ depth: Int) -> Path { Path(keys: (0..<depth).map { _ in keys.randomElement(using: &rng)! }) }
        var counter = PathCounter()
        var batches: [(base: Path, relatives: [Path])] = []
        for _ in 0..<2000 {
            if Bool.random(using: &rng), !batches.isEmpty {
                let gone = batches.remove(at: Int.random(in: 0..<batches.count, using: &rng))
                counter.remove(gone.relatives, under: gone.base)
            } else {
                let base = randomPath(Int.random(in: 0...2, using: &rng))
                let relatives = (0..<Int.random(in: 1...3, using: &rng)).map { _ in randomPath(Int.random(in: 0...2, using: &rng)) }
                counter.add(relatives, under: base)
                batches.append((base, relatives))
            }
            let paths = batches.flatMap { batch in batch.relatives.map { batch.base.appending($0) } }
            let base = randomPath(Int.random(in: 0...2, using: &rng))
            let probe = randomPath(Int.random(in: 0...3, using: &rng))
            XCTAssertEqual(counter.anyAtOrAbove(probe), paths.contains { $0.contains(probe) })
            let probes = (0..<2).map { _ in randomPath(Int.random(in: 0...2, using: &rng)) }
            XCTAssertEqual(counter.anyAtOrAboveOrBelow(probes, under: base),
                           paths.contains { p in probes.contains { p.contains(base.appending($0)) || base.appending($0).contains(p) } })
        }
    }
}
