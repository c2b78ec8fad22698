import XCTest
import RTDBData
@testable import RTDBRules

/// What a rules file's requests made of each part of it: counted once per request (not when
/// a refusal is evaluated again to explain it, nor for `rules check`), placed in the file
/// (escapes and comments included), and shown as data and as a page.
final class RuleCoverageTests: XCTestCase {
    static let source = """
        {
          /* Coverage of each part. */
          "rules": {
            "posts": {
              ".read": true,
              "$id": {
                ".write": "auth != null && (auth.uid == newData.child('by').val() || auth.token.role == \\"editor\\")",
                ".validate": "newData.child('title').isString()"
              }
            },
            "drafts": { ".read": "auth.uid === 'ed'" }
          }
        }

        """

    func user(_ uid: String, _ claims: String = "{}") -> Identity {
        .user(uid: uid, claims: try! JSONValue.parse(claims), expires: nil)
    }

    func write(_ rules: SecurityRules, _ path: String, _ value: String, as identity: Identity, counted: Bool = true) -> SecurityRules.Denial? {
        let sets = [(Path(path), try! JSONReader.parse(value))]
        let after = sets.reduce(Node.empty) { $0.setting($1.0, to: $1.1) }
        return rules.checkWrite(sets, identity: identity, before: .empty, after: after, now: 0, counted: counted)
    }

    func report() throws -> (SecurityRules, () -> RuleCoverageReport) {
        let rules = try SecurityRules(parsing: Self.source).counting()
        XCTAssertNil(write(rules, "posts/p1", #"{"by": "ada", "title": "Hi"}"#, as: user("ada")))
        XCTAssertNil(write(rules, "posts/p2", #"{"by": "bob", "title": "Hi"}"#, as: user("ed", #"{"role": "editor"}"#)))
        XCTAssertEqual(write(rules, "posts/p3", #"{"by": "bob", "title": 3}"#, as: user("bob")), .validation(Path("posts/p3")))
        XCTAssertEqual(write(rules, "posts/p4", #"{"by": "bob"}"#, as: .anonymous), .permission(Path("posts/p4")))
        XCTAssertTrue(rules.canRead(Path("posts"), identity: .anonymous, query: nil, data: .empty, now: 0))
        // Not counted: a refusal evaluated again to explain it, a rules check.
        XCTAssertNotNil(write(rules, "posts/p4", #"{"by": "bob"}"#, as: .anonymous, counted: false))
        _ = rules.answer(read: Path("drafts"), identity: user("ed"), data: .empty, now: 0)
        // The owner's requests skip the rules: nothing to count.
        XCTAssertNil(write(rules, "posts/p5", "1", as: .admin))
        return (rules, { RuleCoverageReport(rules) })
    }

    func testEachPartIsCountedAndPlaced() throws {
        let (_, make) = try report()
        let report = make()
        XCTAssertEqual(report.entries.map(\.rule), ["/posts/.read", "/posts/$id/.write", "/posts/$id/.validate", "/drafts/.read"])
        XCTAssertEqual(report.entries.map { "\($0.line):\($0.column)" }, ["5:16", "7:20", "8:23", "11:27"])
        XCTAssertEqual(report.entries.map(\.evaluations), [1, 4, 3, 0])
        let write = report.entries[1]
        let lines = write.parts.filter { !$0.isConstant }.map { String(repeating: " ", count: $0.depth * 2) + $0.text + " @\($0.line):\($0.column) → " + RuleCoverageReport.summary($0.tally) }
        XCTAssertEqual(lines, [
            #"auth != null && (auth.uid == newData.child('by').val() || auth.token.role == "editor") @7:20 → true ×3, false ×1"#,
            #"  auth != null @7:20 → true ×3, false ×1"#,
            #"    auth @7:20 → auth ×3, null ×1"#,
            #"  (auth.uid == newData.child('by').val() || auth.token.role == "editor") @7:36 → true ×3"#,
            #"    auth.uid == newData.child('by').val() @7:37 → true ×2, false ×1"#,
            #"      auth.uid @7:37 → "ada" ×1, "bob" ×1, "ed" ×1"#,
            #"        auth @7:37 → auth ×3"#,
            #"      newData.child('by').val() @7:49 → "bob" ×2, "ada" ×1"#,
            #"        newData.child('by') @7:49 → a snapshot ×3"#,
            #"          newData @7:49 → a snapshot ×3"#,
            #"    auth.token.role == "editor" @7:78 → true ×1"#,
            #"      auth.token.role @7:78 → "editor" ×1"#,
            #"        auth.token @7:78 → the token's claims ×1"#,
            #"          auth @7:78 → auth ×1"#,
        ])
        // The escaped quotes take two characters each in the file: "editor" ends at column 100.
        let editor = try XCTUnwrap(write.parts.first { $0.text == #""editor""# })
        XCTAssertEqual(editor.end - editor.start, 10)
        XCTAssertEqual(RuleCoverageReport.summary(report.entries[3].parts[0].tally), "never evaluated")
        XCTAssertEqual(report.entries[2].parts.map { RuleCoverageReport.summary($0.tally) }, ["true ×2, false ×1", "a snapshot ×3", "a snapshot ×3"])
    }

    func testTheReportAsDataAndAsAPage() throws {
        let rules = try SecurityRules(parsing: #"{"rules": {".read": "auth.uid == 'a<b'", "x": {".write": false}}}"#).counting()
        XCTAssertFalse(rules.canRead(Path("p"), identity: .user(uid: "ada", claims: .object([]), expires: nil), query: nil, data: .empty, now: 0))
        let report = RuleCoverageReport(rules)
        XCTAssertEqual(report.json.serialized(), #"{"source":"{\"rules\": {\".read\": \"auth.uid == 'a<b'\", \"x\": {\".write\": false}}}","#
            + #""rules":[{"rule":"/.read","line":1,"column":22,"text":"auth.uid == 'a<b'","evaluations":1,"parts":["#
            + #"{"text":"auth.uid == 'a<b'","depth":0,"constant":false,"line":1,"column":22,"start":21,"end":38,"evaluations":1,"values":{"false":1},"otherValues":0,"errors":0,"lastError":null},"#
            + #"{"text":"auth.uid","depth":1,"constant":false,"line":1,"column":22,"start":21,"end":29,"evaluations":1,"values":{"\"ada\"":1},"otherValues":0,"errors":0,"lastError":null},"#
            + #"{"text":"auth","depth":2,"constant":false,"line":1,"column":22,"start":21,"end":25,"evaluations":1,"values":{"auth":1},"otherValues":0,"errors":0,"lastError":null},"#
            + #"{"text":"'a<b'","depth":1,"constant":true,"line":1,"column":34,"start":33,"end":38,"evaluations":1,"values":{"\"a<b\"":1},"otherValues":0,"errors":0,"lastError":null}]},"#
            + #"{"rule":"/x/.write","line":1,"column":58,"text":"false","evaluations":0,"parts":["#
            + #"{"text":"false","depth":0,"constant":true,"line":1,"column":58,"start":57,"end":62,"evaluations":0,"values":{},"otherValues":0,"errors":0,"lastError":null}]}]}"#)
        let page = report.html(namespace: "demo")
        XCTAssertTrue(page.contains(#"<pre>{&quot;rules&quot;: {&quot;.read&quot;: &quot;<span class="p false" title="auth.uid == 'a&lt;b': false ×1">"#
            + #"<span class="p value" title="auth.uid: &quot;ada&quot; ×1"><span class="p value" title="auth: auth ×1">auth</span>.uid</span> == "#
            + #"<span class="p value" title="'a&lt;b': &quot;a&lt;b&quot; ×1">'a&lt;b'</span></span>&quot;, &quot;x&quot;: {&quot;.write&quot;: "#
            + #"<span class="p never" title="false: never evaluated">false</span>}}}</pre>"#), page)
        XCTAssertTrue(page.contains("<p>1 of 2 rules evaluated, 4 of 5 parts, since the rules were set."), page)
        XCTAssertFalse(page.contains("http"), "the page fetches nothing")
    }

    /// Places survive escapes of two scalars' length (a surrogate pair is one scalar, twelve
    /// characters in the file) and CRLF line ends.
    func testPlacesWithSurrogatePairsAndCRLF() throws {
        let source = "{\r\n  \"rules\": {\r\n    \".read\": \"'\\uD83D\\uDE00' == auth.uid\"\r\n  }\r\n}\r\n"
        let rules = try SecurityRules(parsing: source).counting()
        XCTAssertFalse(rules.canRead(Path("a"), identity: .user(uid: "ada", claims: .object([]), expires: nil), query: nil, data: .empty, now: 0))
        let parts = RuleCoverageReport(rules).entries[0].parts
        XCTAssertEqual(parts.map(\.text), ["'😀' == auth.uid", "'😀'", "auth.uid", "auth"])
        XCTAssertEqual(parts.map { "\($0.line):\($0.column)" }, ["3:15", "3:15", "3:33", "3:33"])
        let scalars = Array(source.unicodeScalars)
        XCTAssertEqual(String(String.UnicodeScalarView(scalars[parts[1].start..<parts[1].end])), "'\\uD83D\\uDE00'")
        XCTAssertEqual(String(String.UnicodeScalarView(scalars[parts[0].start..<parts[0].end])), "'\\uD83D\\uDE00' == auth.uid")
    }

    /// A write whose rules evaluate more terms than a request holds before counting them is
    /// counted whole.
    func testALargeWriteIsCountedWhole() throws {
        let rules = try SecurityRules(parsing: #"{"rules": {".write": true, "$k": {".validate": "newData.isNumber()"}}}"#).counting()
        let children = (0..<3000).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        let value = try JSONReader.parse("{" + children + "}")
        XCTAssertNil(rules.checkWrite([(.root, value)], identity: .anonymous, before: .empty, after: value, now: 0))
        let validate = RuleCoverageReport(rules).entries.first { $0.rule == "/$k/.validate" }
        XCTAssertEqual(validate?.parts.map { RuleCoverageReport.summary($0.tally) }, ["true ×3000", "a snapshot ×3000"])
    }
}
