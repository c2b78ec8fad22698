import XCTest
import RTDBData
@testable import RTDBClient

/// What the visible layer shows after a pending write leaves it, on the shortcut an
/// acknowledged merge beside other merges takes and on the full re-layering it falls back to.
final class WriteTreeTests: XCTestCase {
    private func visible(_ tree: WriteTree, _ path: String) -> String {
        tree.visible.completeNode(at: Path(path)).map { JSONWriter.string($0) } ?? "-"
    }

    func testAnAcknowledgedMergeLeavesTheOtherMergesAtItsPath() {
        let tree = WriteTree()
        tree.addMerge(Path("list"), [(Path("k1"), Node(1)), (Path("k2"), Node(2))], id: 1)
        tree.addMerge(Path("list"), [(Path("k3"), Node(3)), (Path("k4/x"), Node(4))], id: 2)
        XCTAssertTrue(tree.remove(id: 1))
        XCTAssertEqual(["k1", "k2", "k3", "k4/x"].map { visible(tree, "list/" + $0) }, ["-", "-", "3", "4"])
        XCTAssertTrue(tree.remove(id: 2))
        XCTAssertEqual(visible(tree, "list/k3"), "-")
        XCTAssertTrue(tree.visible.isEmpty)
    }

    func testAMergeUnderAnotherWriteIsLayeredAgain() {
        let tree = WriteTree()
        tree.addOverwrite(Path("list"), Node(json: .object([("k1", .number(0)), ("k9", .number(9))])), id: 1, visible: true)
        tree.addMerge(Path("list"), [(Path("k1"), Node(1)), (Path("k2"), Node(2))], id: 2)
        tree.addOverwrite(Path("list/k2/deep"), Node(5), id: 3, visible: true)
        // The merge goes: the overwrite below it and the one above it stay as they were.
        XCTAssertTrue(tree.remove(id: 2))
        XCTAssertEqual(visible(tree, "list"), #"{"k1":0,"k2":{"deep":5},"k9":9}"#)
        XCTAssertTrue(tree.remove(id: 1))
        XCTAssertEqual(visible(tree, "list/k1"), "-")
        XCTAssertEqual(visible(tree, "list/k2/deep"), "5")
    }
}
