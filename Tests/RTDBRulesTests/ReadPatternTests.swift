import XCTest
import RTDBData
@testable import RTDBRules

/// Where `.read` rules read the data, from their text: the writes that can change whether a
/// listen may go on are those that touch these places.
final class ReadPatternTests: XCTestCase {
    func testWhereReadRulesReadTheData() throws {
        let rules = try SecurityRules(parsing: """
            {"rules": {
              "rooms": {"$room": {".read": "root.child('members').child($room).child(auth.uid).exists()"}},
              "docs": {"$doc": {".read": "data.child('public').val() == true || data.parent().child('shared/' + $doc).exists()"}},
              "any": {".read": "root.child(data.child('ref').val()).exists()"},
              "open": {".read": "auth != null"}
            }}
            """)
        func patterns(_ path: String) -> [String] { rules.readPatterns(Path(path)).map(\.description) }
        XCTAssertEqual(patterns("rooms/r1"), ["/members/r1/…"])
        XCTAssertEqual(patterns("rooms/r1/messages"), ["/members/r1/…"])
        XCTAssertEqual(patterns("rooms"), [])
        XCTAssertEqual(patterns("docs/d1"), ["/docs/d1/public", "/docs/…"])
        XCTAssertEqual(patterns("any"), ["/…", "/any/ref"])
        XCTAssertEqual(patterns("open"), [])

        let members = try XCTUnwrap(rules.readPatterns(Path("rooms/r1")).first)
        for touching in ["members/r1/ada", "members/r1", "members", ""] {
            XCTAssertTrue(members.isTouched(by: Path(touching)), touching)
        }
        for elsewhere in ["members/r2", "members/r2/ada", "rooms/r1", "notes"] {
            XCTAssertFalse(members.isTouched(by: Path(elsewhere)), elsewhere)
        }
    }
}
