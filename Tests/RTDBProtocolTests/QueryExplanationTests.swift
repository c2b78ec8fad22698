import XCTest
import RTDBData
import RTDBProtocol

/// An explanation's JSON, as rtdb serve sends it and the shell reads it back; anything else
/// is not taken for one.
final class QueryExplanationTests: XCTestCase {
    func testJSONIsExactAndReadsBack() throws {
        let built = QueryExplanation(path: "/rooms/a/messages", index: "sent", use: .built, declared: false, unindexed: true, children: 1000,
                                     ordered: 1000, returned: 20, micros: 412, listens: 0,
                                     add: .init(rules: "/rooms/$room/messages", indexOn: ["author", "sent"]))
        let text = #"{"path":"/rooms/a/messages","index":"sent","use":"built","declared":false,"unindexed":true,"children":1000,"ordered":1000,"returned":20,"micros":412,"listens":0,"add":{"rules":"/rooms/$room/messages",".indexOn":["author","sent"]}}"#
        XCTAssertEqual(built.json.serialized(), text)
        XCTAssertEqual(QueryExplanation(json: try JSONValue.parse(text)), built)
        XCTAssertEqual(built.read, 1020)
        XCTAssertEqual(built.add?.rule, #"".indexOn": ["author", "sent"]"#)
        XCTAssertEqual(QueryExplanation.Advice(rules: "/", indexOn: [".value"]).rule, #"".indexOn": ".value""#)

        let whole = QueryExplanation(path: "/", index: nil, use: .whole, declared: false, unindexed: false, children: 3, ordered: 0,
                                     returned: 3, micros: 5, listens: 0, add: nil)
        XCTAssertEqual(whole.json.serialized(), #"{"path":"/","index":null,"use":"whole","declared":false,"unindexed":false,"children":3,"ordered":0,"returned":3,"micros":5,"listens":0}"#)
        XCTAssertEqual(QueryExplanation(json: whole.json), whole)
        for use in QueryExplanation.Use.allCases {
            let e = QueryExplanation(path: "/x", index: ".key", use: use, declared: true, unindexed: false, children: 1, ordered: 0,
                                     returned: 1, micros: 0, listens: 2, add: nil)
            XCTAssertEqual(QueryExplanation(json: e.json), e, use.rawValue)
        }
    }

    /// Data that a server answered instead (hosted Firebase ignoring `explain`) is not read
    /// as an explanation.
    func testOtherJSONIsNone() throws {
        let good = #"{"path":"/","index":null,"use":"whole","declared":false,"unindexed":false,"children":3,"ordered":0,"returned":3,"micros":5,"listens":0}"#
        XCTAssertNotNil(QueryExplanation(json: try JSONValue.parse(good)))
        let bad = [
            "null", "[]", #"{"ada": {"age": 36}}"#,
            good.replacingOccurrences(of: #""use":"whole""#, with: #""use":"guess""#),
            good.replacingOccurrences(of: #""children":3"#, with: #""children":-3"#),
            good.replacingOccurrences(of: #""children":3"#, with: #""children":3.5"#),
            good.replacingOccurrences(of: #""index":null"#, with: #""index":7"#),
            good.replacingOccurrences(of: #""micros":5"#, with: #""micros":"5""#),
            good.replacingOccurrences(of: #""listens":0}"#, with: #""listens":0,"add":{"rules":"/"}}"#),
            good.replacingOccurrences(of: #""listens":0}"#, with: #""listens":0,"add":{"rules":"/",".indexOn":[]}}"#),
            good.replacingOccurrences(of: #""listens":0}"#, with: #""listens":0,"add":{"rules":"/",".indexOn":["a",1]}}"#),
        ]
        for text in bad { XCTAssertNil(QueryExplanation(json: try JSONValue.parse(text)), text) }
    }
}
