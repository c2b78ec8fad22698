import XCTest
@testable import RTDBData

/// The escapes of a JSON string, decoded from scalars, as RFC 8259 says.
final class JSONEscapeTests: XCTestCase {
    private func decode(_ text: String) -> Result<(String, Int), JSONEscape.Problem> {
        JSONEscape.decode(Array(text.unicodeScalars), at: 0).map { (String($0.scalar), $0.next) }
    }

    func testEveryEscapeJSONHas() {
        let cases: [(String, String)] = [(#"\""#, "\""), (#"\\"#, "\\"), (#"\/"#, "/"), (#"\b"#, "\u{08}"), (#"\f"#, "\u{0C}"),
                                         (#"\n"#, "\n"), (#"\r"#, "\r"), (#"\t"#, "\t"), (#"\u0041"#, "A"), (#"\u00e9"#, "é")]
        for (escape, expected) in cases {
            guard case .success(let (scalar, next)) = decode(escape + "rest") else { return XCTFail(escape) }
            XCTAssertEqual(scalar, expected, escape)
            XCTAssertEqual(next, escape.unicodeScalars.count, escape)
        }
    }

    /// A high surrogate and the low one after it are one scalar; either alone is an error.
    func testSurrogatePairsAreOneScalar() {
        guard case .success(let (scalar, next)) = decode(#"\ud83d\ude00x"#) else { return XCTFail("pair") }
        XCTAssertEqual(scalar, "😀")
        XCTAssertEqual(next, 12)
        XCTAssertEqual(decode(#"\ud83dx"#).failure, .unpairedSurrogate)
        XCTAssertEqual(decode(#"\ud83d\u0041"#).failure, .unpairedSurrogate)
        XCTAssertEqual(decode(#"\ude00"#).failure, .unpairedSurrogate)
    }

    func testProblems() {
        XCTAssertEqual(decode(#"\"#).failure, .unterminated)
        XCTAssertEqual(decode(#"\u00"#).failure, .unterminated)
        XCTAssertEqual(decode(#"\u00zz"#).failure, .badHex)
        XCTAssertEqual(decode(#"\u٣٣٣٣"#).failure, .badHex)  // digits, but not ASCII ones
        XCTAssertEqual(decode(#"\x"#).failure, .invalid("x"))
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let problem) = self { return problem }
        return nil
    }
}
