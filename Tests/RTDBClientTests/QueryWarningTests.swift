import XCTest
import RTDBData
import RTDBProtocol
@testable import RTDBClient

/// A listen's and a read's warnings, as the wire carries them and as the shell is told of them.
final class QueryWarningTests: XCTestCase {
    func testTheWireFormAndTheMessage() throws {
        guard case .response(1, let response) = try WireCodec.decode(#"{"t":"d","d":{"r":1,"b":{"s":"ok","d":{"w":["no_index"]}}}}"#) else {
            return XCTFail("not a response")
        }
        XCTAssertEqual(PersistentConnection.warnings(of: response), ["no_index"])
        XCTAssertEqual(PersistentConnection.warnings(of: .ok(warnings: ["no_index"])), ["no_index"])
        XCTAssertEqual(PersistentConnection.warnings(of: .ok), [])
        var query = QueryParams()
        query.index = .child(Path("age"))
        XCTAssertEqual(Repo.warning(["no_index"], path: Path("users"), query: query),
                       #"Using an unspecified index. Consider adding ".indexOn": "age" at /users to your security rules for better performance."#)
        XCTAssertNil(Repo.warning(["something_else"], path: Path("users"), query: query))
    }

    /// A read's answer carries them beside its data, which stays what it was.
    func testAReadsAnswerCarriesThemBesideItsData() throws {
        var answer = Response.value(Node(children: ChildMap(unsorted: [(ChildKey("a"), Node(1.0))])))
        answer.warnings = ["no_index"]
        let text = #"{"t":"d","d":{"r":7,"b":{"s":"ok","d":{"a":1},"w":["no_index"]}}}"#
        XCTAssertEqual(WireCodec.encode(.response(id: 7, answer)), text)
        XCTAssertEqual(try WireCodec.decode(text), .response(id: 7, answer))
        XCTAssertEqual(WireCodec.encode(.response(id: 7, .value(.empty))), #"{"t":"d","d":{"r":7,"b":{"s":"ok","d":null}}}"#)
    }
}
