import XCTest
import RTDBData
import RTDBProtocol

/// A query's REST parameters, as a client writes them (`RESTQuery.items`), read back by
/// the server as the same query.
final class RESTQueryTests: XCTestCase {
    func testEveryFormReadsBackAsItself() throws {
        let age = QueryParams().ordered(by: .child(Path("age")))
        let cases: [(QueryParams, String)] = [
            (age.limitToFirst(2), #"orderBy="age"&limitToFirst=2"#),
            (QueryParams().ordered(by: .child(Path("a/b"))).limitToLast(1), #"orderBy="a/b"&limitToLast=1"#),
            (age.startAt(Node(30.0)).endBefore(Node(40.0), key: "k"), #"orderBy="age"&startAt=30&endBefore=40,"k""#),
            (age.startAfter(Node("x\"y"), key: "é").limitToLast(3), #"orderBy="age"&startAfter="x\"y","é"&limitToLast=3"#),
            (age.equalTo(Node(true)), #"orderBy="age"&startAt=true&endAt=true"#),
            (age.equalTo(.empty, key: "n"), #"orderBy="age"&startAt=null,"n"&endAt=null,"n""#),
            (QueryParams().ordered(by: .key).startAt(Node("b")).endAt(Node("d")), #"orderBy="$key"&startAt="b"&endAt="d""#),
            (QueryParams().ordered(by: .value).limitToLast(5), #"orderBy="$value"&limitToLast=5"#),
            (QueryParams().limitToFirst(1), #"orderBy="$priority"&limitToFirst=1"#),
            (QueryParams().ordered(by: .key), #"orderBy="$key""#),
            // A bound's sentinel key that is not where the bound sits without one.
            (age.startAt(Node(5.0), key: "[MAX_NAME]"), #"orderBy="age"&startAt=5,"[MAX_NAME]""#),
            (age.endAt(Node(5.0), key: "[MIN_NAME]"), #"orderBy="age"&endAt=5,"[MIN_NAME]""#),
        ]
        for (params, text) in cases {
            let items = RESTQuery.items(for: params)
            XCTAssertEqual(items.map { $0.name + "=" + $0.value }.joined(separator: "&"), text)
            let read = try RESTQuery.params(Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value) }))
            XCTAssertEqual(read, params, text)
        }
        XCTAssertTrue(RESTQuery.items(for: QueryParams()).isEmpty)

        // The sentinels the official clients write for startAfter and endBefore, and one
        // where a bound sits anyway: the same window.
        let same: [(String, QueryParams)] = [
            (#"startAfter=5,"[MAX_NAME]""#, age.startAfter(Node(5.0))),
            (#"endBefore=5,"[MIN_NAME]""#, age.endBefore(Node(5.0))),
            (#"startAt=5,"[MIN_NAME]""#, age.startAt(Node(5.0))),
            (#"endAt=5,"[MAX_NAME]""#, age.endAt(Node(5.0))),
        ]
        for (text, params) in same {
            let split = text.split(separator: "=", maxSplits: 1).map(String.init)
            XCTAssertEqual(try RESTQuery.params(["orderBy": #""age""#, split[0]: split[1]]), params, text)
        }
        // A limit beyond what REST takes asks for as many as it takes.
        XCTAssertEqual(RESTQuery.items(for: age.limitToFirst(3_000_000_000)).last?.value, "2147483647")
    }
}
