import XCTest
@testable import RTDBData

/// The official vectors from the JS SDK's node tests (protocol.md §4).
final class NodeHashTests: XCTestCase {
    func node(_ json: String) throws -> Node { try JSONReader.parse(json) }

    func testSimpleVectors() throws {
        let n = try node(#"{"intNode": 4, "doubleNode": 4.5623, "stringNode": "hey guys", "boolNode": true}"#)
        XCTAssertEqual(n.child("intNode").hashString, "eVih19a6ZDz3NL32uVBtg9KSgQY=")
        XCTAssertEqual(n.child("doubleNode").hashString, "vf1CL0tIRwXXunHcG/irRECk3lY=")
        XCTAssertEqual(n.child("stringNode").hashString, "CUNLXWpCVoJE6z7z1vE57lGaKAU=")
        XCTAssertEqual(n.child("boolNode").hashString, "E5z61QM0lN/U2WsOnusszCTkR8M=")
        XCTAssertEqual(n.hashString, "6Mc4jFmNdrLVIlJJjz2/MakTK9I=")
    }

    func testPriorityVectors() throws {
        XCTAssertEqual(try node(#"{"root": {"c": {".value": 99, ".priority": "abc"}, ".priority": "def"}}"#).hashString,
                       "Fm6tzN4CVEu5WxFDZUdTtqbTVaA=")
        XCTAssertEqual(try node(#"{"root": {"c": {".value": 99, ".priority": 42}, ".priority": 3.14}}"#).hashString,
                       "B15QCqrzCxrI5zz1y00arWqFRFg=")
    }

    func testStressVectors() throws {
        let n = try node(#"""
        {"a": -1.7976931348623157e308, "b": 1.7976931348623157e308, "c": "unicode ✔ 🐵 🌴 x͢",
         "d": 3.1415926535897932384626433832795, "e": {".value": 12345678901234568, ".priority": "🐵"},
         "✔": "foo", ".priority": "✔"}
        """#)
        XCTAssertEqual(n.child("a").hashString, "7HxgOBDEC92uQwhCuuvKA2rbXDA=")
        XCTAssertEqual(n.child("b").hashString, "8R+ekVQmxs6ZWP0fdzFHxVeGnWo=")
        XCTAssertEqual(n.child("c").hashString, "JoKoFUnbmg3/DlY70KaDWslfYPk=")
        XCTAssertEqual(n.child("d").hashString, "Y41iC5+92GIqXfabOm33EanRI8s=")
        XCTAssertEqual(n.child("e").hashString, "+E+Mxlqh5MhT+On05bjsZ6JaaxI=")
        XCTAssertEqual(n.child("✔").hashString, "MRRL/+aA/uibaL//jghUpxXS/uY=")
        XCTAssertEqual(n.hashString, "CyC0OU8GSkOAKnsPjheWtWC0Yxo=")
    }

    func testEmptyHashIsEmptyString() throws {
        XCTAssertEqual(Node.empty.hashString, "")
        XCTAssertEqual(try node("{}").hashString, "")
        XCTAssertEqual(try node(#"{"a": null}"#).hashString, "")
    }

    func testHashTextUsesExactBitsAndPriorityOrder() {
        XCTAssertEqual(Node.leafHashText(.number(4)), "number:4010000000000000")
        XCTAssertEqual(Node.leafHashText(.number(-0.0)), "number:8000000000000000")
        // Children are hashed in priority order, not key order: b (priority 1) before a (priority 2).
        let prioritised = Node(children: ChildMap(unsorted: [
            (ChildKey("a"), Node(.number(1), priority: .number(2))),
            (ChildKey("b"), Node(.number(1), priority: .number(1))),
        ]))
        let a = prioritised.child("a").hashString, b = prioritised.child("b").hashString
        XCTAssertEqual(prioritised.hashString, Node.sha1Base64(":b:\(b):a:\(a)"))
    }
}
