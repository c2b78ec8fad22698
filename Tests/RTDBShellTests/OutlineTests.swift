import XCTest
import RTDBData
@testable import RTDBShell

/// `tree` and `du` from a value.
final class OutlineTests: XCTestCase {
    let users = try! JSONReader.parse(#"{"ada": {"name": "Ada Lovelace", "born": 1815, "langs": ["en", "fr"]}, "bob": {"name": "Bob"}, "cy": "a very long string value that goes on and on past any width"}"#)

    func testTreeDrawsTheShapeToItsDepth() {
        XCTAssertEqual(Outline.tree(users, at: Path("users"), depth: 2, width: 50), """
        /users  {3 children}
        ├── ada  {3 children}
        │   ├── born  1815
        │   ├── langs  {2 children}
        │   └── name  "Ada Lovelace"
        ├── bob  {1 child}
        │   └── name  "Bob"
        └── cy  "a very long string value that goes on an…

        """)
        // Cut to the width exactly.
        XCTAssertEqual(Outline.tree(users, at: Path("users"), depth: 2, width: 50).split(separator: "\n").map(\.count).max(), 50)
        XCTAssertEqual(Outline.tree(users, at: Path("users"), depth: 1, width: 80).split(separator: "\n").count, 4)
        XCTAssertEqual(Outline.tree(.empty, at: .root, depth: 2, width: 80), "/  null\n")
    }

    func testTreeCountsTheChildrenItDoesNotShow() {
        var children = ChildMap()
        for i in 0..<25 { children = children.inserting(ChildKey("k\(i)"), Node(Double(i))) }
        let text = Outline.tree(Node(children: children), at: Path("big"), depth: 1, width: 80)
        XCTAssertTrue(text.hasSuffix("├── k4  4\n└── … 5 more\n"), text)  // in key order: k0, k1, k10…
        XCTAssertEqual(text.split(separator: "\n").count, 1 + 20 + 1)
    }

    func testTreeJSONCutsObjectsBelowTheDepth() {
        XCTAssertEqual(JSONWriter.string(Outline.treeJSON(users, depth: 1)),
                       #"{"ada":{".children":3},"bob":{".children":1},"cy":"a very long string value that goes on and on past any width"}"#)
    }

    /// Sizes are those of the compact JSON get --json prints, largest first.
    func testDuMeasuresCompactJSON() {
        let sizes = Outline.sizes(users, at: Path("users"), depth: 1)
        XCTAssertEqual(sizes.map(\.path), [Path("users"), Path("users/cy"), Path("users/ada"), Path("users/bob")])
        XCTAssertEqual(sizes[0].bytes, JSONWriter.string(users).utf8.count)
        for size in sizes.dropFirst() {
            let key = size.path.keys.last!
            XCTAssertEqual(size.bytes, JSONWriter.string(users.child(at: Path(key))).utf8.count, key)
        }
        XCTAssertEqual(Outline.sizes(users, at: Path("users"), depth: 2).count, 1 + 3 + 4)
        XCTAssertEqual(Outline.sizes(Node(5), at: Path("n"), depth: 1).map(\.bytes), [1])
    }

    func testHumanBytes() {
        XCTAssertEqual([0, 999, 1000, 1500, 12_345, 999_999, 1_000_000, 2_500_000_000].map(Outline.humanBytes),
                       ["0 B", "999 B", "1.0 kB", "1.5 kB", "12 kB", "1000 kB", "1.0 MB", "2.5 GB"])
    }
}
