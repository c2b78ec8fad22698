import XCTest
import RTDBData
import RTDBProtocol

/// An explanation's JSON, as rtdb serve sends it and the shell reads it back; anything else
/// is not taken for one.
final class QueryExplanationTests: XCTestCase {
    func testJSONIsExactAndReadsBack() throws {
        let built = QueryExplanation(path: "/rooms/a/messages", rules: "/rooms/$room/messages", index: "sent", use: .built, declared: false,
                                     unindexed: true, children: 1000, ordered: 1000, returned: 20, micros: 412, listens: 0,
                                     indexOn: ["author", "sent"])
        let text = #"{"path":"/rooms/a/messages","rules":"/rooms/$room/messages","index":"sent","use":"built","declared":false,"unindexed":true,"children":1000,"ordered":1000,"returned":20,"micros":412,"listens":0,"indexOn":["author","sent"]}"#
        XCTAssertEqual(built.json.serialized(), text)
        XCTAssertEqual(QueryExplanation(json: try JSONValue.parse(text)), built)
        XCTAssertEqual(built.read, 1020)
        XCTAssertEqual(QueryExplanation.rule(["author", "sent"]), #"".indexOn": ["author", "sent"]"#)
        XCTAssertEqual(QueryExplanation.rule([".value"]), #"".indexOn": ".value""#)

        let whole = QueryExplanation(path: "/", rules: "/", index: nil, use: .whole, declared: false, unindexed: false, children: 3, ordered: 0,
                                     returned: 3, micros: 5, listens: 0, indexOn: nil)
        XCTAssertEqual(whole.json.serialized(), #"{"path":"/","rules":"/","index":null,"use":"whole","declared":false,"unindexed":false,"children":3,"ordered":0,"returned":3,"micros":5,"listens":0}"#)
        XCTAssertEqual(QueryExplanation(json: whole.json), whole)
        for use in [QueryExplanation.Use.whole, .keyOrder, .kept, .stored, .built] {
            let e = QueryExplanation(path: "/x", rules: "/$x", index: ".key", use: use, declared: true, unindexed: false, children: 1, ordered: 0,
                                     returned: 1, micros: 0, listens: 2, indexOn: nil)
            XCTAssertEqual(QueryExplanation(json: e.json), e, use.rawValue)
        }
    }

    /// Data that a server answered instead (hosted Firebase ignoring `explain`) is not read
    /// as an explanation; a null `indexOn` is none.
    func testOtherJSONIsNone() throws {
        let good = #"{"path":"/","rules":"/","index":null,"use":"whole","declared":false,"unindexed":false,"children":3,"ordered":0,"returned":3,"micros":5,"listens":0}"#
        XCTAssertNotNil(QueryExplanation(json: try JSONValue.parse(good)))
        XCTAssertEqual(QueryExplanation(json: try JSONValue.parse(good.replacingOccurrences(of: "0}", with: #"0,"indexOn":null}"#))),
                       QueryExplanation(json: try JSONValue.parse(good)))
        let bad = [
            "null", "[]", #"{"ada": {"age": 36}}"#,
            good.replacingOccurrences(of: #""use":"whole""#, with: #""use":"guess""#),
            good.replacingOccurrences(of: #""rules":"/","#, with: ""),
            good.replacingOccurrences(of: #""children":3"#, with: #""children":-3"#),
            good.replacingOccurrences(of: #""children":3"#, with: #""children":3.5"#),
            good.replacingOccurrences(of: #""index":null"#, with: #""index":7"#),
            good.replacingOccurrences(of: #""micros":5"#, with: #""micros":"5""#),
            good.replacingOccurrences(of: #""listens":0}"#, with: #""listens":0,"indexOn":"a"}"#),
            good.replacingOccurrences(of: #""listens":0}"#, with: #""listens":0,"indexOn":[]}"#),
            good.replacingOccurrences(of: #""listens":0}"#, with: #""listens":0,"indexOn":["a",1]}"#),
        ]
        for text in bad { XCTAssertNil(QueryExplanation(json: try JSONValue.parse(text)), text) }
    }
}
