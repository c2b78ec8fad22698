import XCTest
@testable import RTDBServer

/// The Emulator UI's upload form, read as browsers and curl send it, and refused with a reason
/// when it is not one.
final class MultipartFormTests: XCTestCase {
    private func form(_ text: String) -> [UInt8] { Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8) }

    func testTheNamedFieldIsFoundAmongOthers() throws {
        let body = form("""
            --XyZ
            Content-Disposition: form-data; name="note"

            not this
            --XyZ
            Content-Disposition: form-data; name="myFile"; filename="users.json"
            Content-Type: application/json

            {"a":1}
            --XyZ--

            """)
        XCTAssertEqual(try MultipartForm.field("myFile", in: body, contentType: "multipart/form-data; boundary=XyZ"), Array(#"{"a":1}"#.utf8))
        XCTAssertEqual(try MultipartForm.field("note", in: body, contentType: #"multipart/form-data; charset=utf-8; boundary="XyZ""#),
                       Array("not this".utf8))
    }

    func testContentKeepsItsOwnLineBreaksAndDashes() throws {
        // A preamble before the first boundary and padding after a boundary are allowed.
        let body = form("preamble\n--b  \nContent-Disposition: form-data; name=myFile\n\n--a\n\n-- b\n--b--")
        XCTAssertEqual(try MultipartForm.field("myFile", in: body, contentType: "multipart/form-data; boundary=b"),
                       Array("--a\r\n\r\n-- b".utf8))
        // A part with no headers at all has no name; the blank line after it is not taken
        // for the end of headers further on.
        let headless = form("--b\n\nx\n--b\nContent-Disposition: form-data; name=myFile\n\n1\n--b--")
        XCTAssertEqual(try MultipartForm.field("myFile", in: headless, contentType: "multipart/form-data; boundary=b"), Array("1".utf8))
        let bare = form("--b\n\nx\n--b--")
        XCTAssertThrowsError(try MultipartForm.field("myFile", in: bare, contentType: "multipart/form-data; boundary=b")) { error in
            XCTAssertEqual((error as? MultipartForm.Failure)?.message, "the form has no field named \"myFile\"")
        }
    }

    func testMalformedFormsAreRefusedWithTheReason() {
        func reason(_ body: String, _ contentType: String? = "multipart/form-data; boundary=b") -> String? {
            do {
                _ = try MultipartForm.field("myFile", in: form(body), contentType: contentType)
                return nil
            } catch {
                return error.message
            }
        }
        let notAForm = "an upload is a multipart/form-data body (Content-Type: multipart/form-data; boundary=…)"
        XCTAssertEqual(reason("x", nil), notAForm)
        XCTAssertEqual(reason("x", "application/json"), notAForm)
        XCTAssertEqual(reason("x", "multipart/form-data"), notAForm)
        XCTAssertEqual(reason("x", "multipart/form-data; boundary=" + String(repeating: "b", count: 71)), notAForm)
        XCTAssertEqual(reason("no boundary here"), "the form's boundary \"b\" does not occur in the body")
        XCTAssertEqual(reason("--bx"), "the form is malformed at byte 3: a boundary line does not end with CRLF")
        XCTAssertEqual(reason("--b\nContent-Disposition: form-data; name=myFile"), "the form is malformed at byte 5: a part's headers do not end")
        XCTAssertEqual(reason("--b\nContent-Disposition: form-data; name=myFile\n\n{}"),
                       "the form is cut short: the part that starts at byte 5 has no closing boundary")
        XCTAssertEqual(reason("--b"), "the form is malformed at byte 3: a boundary line does not end with CRLF")
        XCTAssertEqual(reason("--b--"), "the form has no field named \"myFile\"")
    }
}
