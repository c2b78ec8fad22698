import XCTest
@testable import RTDBData

final class PathTests: XCTestCase {
    func testParsing() {
        XCTAssertEqual(Path("/a//b/").keys, ["a", "b"])
        XCTAssertTrue(Path("/").isRoot)
        XCTAssertEqual(Path("a/b").description, "/a/b")
        XCTAssertEqual(Path.root.description, "/")
        XCTAssertEqual(Path("a/b").wireString, "a/b")
    }

    /// A path written into JSON key by key reads back as its string forms: escapes included
    /// (the keys a path may hold can still need them: quotes, backslashes, control bytes
    /// from a peer that does not check).
    func testAPathWrittenAsJSONReadsBackAsItsStringForms() throws {
        for keys in [[], ["a"], ["a", "b"], [#"q"uote"#, #"back\slash"#], ["tab\t", "\u{1}", "✔ é"], ["", "x"]] {
            let path = Path(keys: keys)
            for slash in [true, false] {
                var out: [UInt8] = []
                JSONWriter.writePath(path, leadingSlash: slash, to: &out)
                var expected: [UInt8] = []
                JSONWriter.writeString(slash ? path.description : path.wireString, to: &expected)
                XCTAssertEqual(out, expected, "\(keys)")
            }
        }
    }

    func testForbiddenCharacters() {
        for bad in ["a.b", "a$", "#", "[x", "x]", "tab\tkey", "del\u{7F}", "nul\u{0}"] {
            XCTAssertThrowsError(try Path.validated("/users/\(bad)"), bad) { error in
                guard case DataError.invalidKey(let key, _, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(key, bad)
            }
        }
        XCTAssertNoThrow(try Path.validated("/users/ada lovelace/✔"))
    }

    func testMessageNamesTheSegment() {
        XCTAssertThrowsError(try Path.validated("/users/a.b/name")) { error in
            XCTAssertEqual("\(error)", ##"invalid key "a.b" in "/users/a.b/name": keys must not contain ".", "$", "#", "[", "]" or "/" (found ".")"##)
        }
    }

    func testDepthAndLength() {
        let deep = (0..<32).map { "k\($0)" }.joined(separator: "/")
        XCTAssertNoThrow(try Path.validated(deep))
        XCTAssertThrowsError(try Path.validated(deep + "/x")) { error in
            guard case DataError.pathTooDeep(_, 33) = error else { return XCTFail("\(error)") }
        }
        XCTAssertNoThrow(try Path.validated(String(repeating: "a", count: 768)))
        XCTAssertThrowsError(try Path.validated(String(repeating: "a", count: 769))) { error in
            guard case DataError.pathTooLong(_, 769) = error else { return XCTFail("\(error)") }
        }
        // The limit is on the whole path, separators included.
        XCTAssertThrowsError(try Path.validated(String(repeating: "a", count: 384) + "/" + String(repeating: "b", count: 384)))
        // Multi-byte characters count in UTF-8 bytes.
        XCTAssertThrowsError(try Path.validated(String(repeating: "é", count: 385)))
    }

    func testInfoIsReadOnly() {
        XCTAssertNoThrow(try Path.validated("/.info/connected"))
        XCTAssertThrowsError(try Path.validated("/.info/connected", allowInfo: false)) { error in
            XCTAssertEqual(error as? DataError, .readOnlyPath("/.info/connected"))
        }
        XCTAssertThrowsError(try Path.validated("/a/.info"))
    }

    func testContainment() {
        XCTAssertTrue(Path("a").contains(Path("a/b")))
        XCTAssertTrue(Path.root.contains(Path("a")))
        XCTAssertFalse(Path("a/b").contains(Path("a")))
        XCTAssertFalse(Path("a").contains(Path("ab")))
        XCTAssertEqual(Path("a/b/c").relative(to: Path("a")), Path("b/c"))
        // Either way round; siblings and mere prefixes of a key do not overlap.
        XCTAssertTrue(Path("a").overlaps(Path("a/b")))
        XCTAssertTrue(Path("a/b").overlaps(Path("a")))
        XCTAssertTrue(Path("a").overlaps(Path("a")))
        XCTAssertTrue(Path("a/b").overlaps(.root))
        XCTAssertFalse(Path("a/b").overlaps(Path("a/c")))
        XCTAssertFalse(Path("a").overlaps(Path("ab")))
    }
}
