import Foundation
import XCTest
import RTDBData
@testable import RTDBRules

/// The table of rules cases (RuleCases.json), run against the rules engine alone. The same
/// table runs against `rtdb serve` over REST and the realtime protocol (Tests/Python).
final class RuleCaseTests: XCTestCase {
    private let now = Date().timeIntervalSince1970 * 1000

    func testEveryCaseOfTheTable() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("RuleCases.json")
        let table = try JSONValue.parse(String(contentsOf: file, encoding: .utf8))
        var count = 0
        for group in try XCTUnwrap(table["groups"]?.array) {
            let name = group["name"]?.string ?? "?"
            let rules = try SecurityRules(parsing: try XCTUnwrap(group["rules"]).serialized())
            let data = try JSONReader.parse(try XCTUnwrap(group["data"]).serialized())
            for (i, testCase) in try XCTUnwrap(group["cases"]?.array).enumerated() {
                let label = "\(name), case \(i + 1)"
                let path = Path(try XCTUnwrap(testCase["path"]?.string, label))
                let identity = try identity(testCase["auth"] ?? .null)
                let expected = try XCTUnwrap(testCase["allow"]?.bool, label)
                var after = data
                switch testCase["op"]?.string {
                case "read":
                    let query = try self.query(testCase["query"])
                    XCTAssertEqual(rules.canRead(path, identity: identity, query: query, data: data, now: now), expected, label)
                case "set", "update":
                    var sets: [(Path, Node)] = []
                    let value = try XCTUnwrap(testCase["value"], label)
                    if testCase["op"]?.string == "set" {
                        sets = [(path, try resolved(value, at: path, in: data))]
                    } else {
                        for (relative, child) in try XCTUnwrap(value.members, label) {
                            let full = path.appending(Path(relative))
                            sets.append((full, try resolved(child, at: full, in: data)))
                        }
                    }
                    let written = data.merging(sets)
                    let denial = rules.checkWrite(sets, identity: identity, before: data, after: written, now: now)
                    XCTAssertEqual(denial == nil, expected, "\(label): \(String(describing: denial))")
                    // Rules that cannot look at the new data judge the write the same without it.
                    if !rules.writeRulesReadNewData {
                        XCTAssertEqual(rules.checkWrite(sets, identity: identity, before: data, after: nil, now: now), denial, label)
                    }
                    if denial == nil { after = written }
                default:
                    XCTFail("\(label): unknown op")
                }
                if let check = testCase["after"] {
                    let at = Path(try XCTUnwrap(check["path"]?.string))
                    XCTAssertEqual(after.child(at: at), try JSONReader.parse(try XCTUnwrap(check["value"]).serialized()), label)
                }
                count += 1
            }
        }
        XCTAssertGreaterThanOrEqual(count, 80)
    }

    func testWritesReadTheNewDataOnlyThroughValidateOrNewData() throws {
        let cases: [(String, Bool)] = [
            (#"{"rules": {".read": true, ".write": true}}"#, false),
            (#"{"rules": {"users": {"$uid": {".write": "auth != null && auth.uid == $uid && !data.exists()"}}}}"#, false),
            (#"{"rules": {"a": {".read": "data.exists()", ".write": "root.child('open').val() == true"}}}"#, false),
            (#"{"rules": {"a": {"b": {".write": "newData.child('x').val() > root.child('y').val()"}}}}"#, true),
            (#"{"rules": {".write": true, "a": {"$k": {"c": {".validate": "true"}}}}}"#, true),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(try SecurityRules(parsing: text).writeRulesReadNewData, expected, text)
        }
        XCTAssertFalse(SecurityRules.open.writeRulesReadNewData)
    }

    private func resolved(_ value: JSONValue, at path: Path, in data: Node) throws -> Node {
        try JSONReader.parse(value.serialized()).resolvingServerValues(now: now, existing: data.child(at: path))
    }

    /// null: no credential; "owner"; or a token's claims, `uid` standing for `sub`.
    private func identity(_ auth: JSONValue) throws -> Identity {
        switch auth {
        case .null: return .anonymous
        case .string("owner"): return .admin
        default:
            var claims = try XCTUnwrap(auth.members).filter { $0.0 != "uid" }
            claims.append(("sub", try XCTUnwrap(auth["uid"])))
            return try Identity.from(claims: .object(claims), now: now / 1000)
        }
    }

    /// REST's query parameters as the realtime protocol's query.
    private func query(_ parameters: JSONValue?) throws -> QueryParams? {
        guard let parameters else { return nil }
        var query = QueryParams()
        func value(_ name: String) throws -> Node? {
            guard let text = parameters[name]?.string else { return nil }
            return Node(json: try JSONValue.parse(text))
        }
        switch try value("orderBy")?.leafValue {
        case .string("$key")?: query = query.ordered(by: .key)
        case .string("$value")?: query = query.ordered(by: .value)
        case .string("$priority")?: query = query.ordered(by: .priority)
        case .string(let child)?: query = query.ordered(by: .child(Path(child)))
        default: break
        }
        if let start = try value("startAt") { query = query.startAt(start) }
        if let end = try value("endAt") { query = query.endAt(end) }
        if let equal = try value("equalTo") { query = query.equalTo(equal) }
        if case .number(let n)? = try value("limitToFirst")?.leafValue { query = query.limitToFirst(Int(n)) }
        if case .number(let n)? = try value("limitToLast")?.leafValue { query = query.limitToLast(Int(n)) }
        return query
    }
}
