import XCTest
import RTDBData
@testable import RTDBRules

/// Loading rules: what is refused, with which line and column, and nothing that can exhaust
/// the stack or run unbounded.
final class RulesParsingTests: XCTestCase {
    private func refusal(_ text: String) -> String {
        do {
            _ = try SecurityRules(parsing: text)
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    func testMistakesAreNamedWithTheirPosition() {
        let cases: [(String, String)] = [
            (#"{"rules": {".read": "auth.uid = 'a'"}}"#, "line 1, column 31: in .read: unexpected character '='"),
            (#"{"rules": {".read": "data == null"}}"#, "line 1, column 27: in .read: a data snapshot cannot be compared (compare its val(), or use exists())"),
            (#"{"rules": {".read": "newData.exists()"}}"#, "line 1, column 22: in .read: newData is not available in .read rules"),
            (#"{"rules": {".write": "query.orderByKey"}}"#, "line 1, column 23: in .write: query is not available in .write rules"),
            (#"{"rules": {".read": "$uid == auth.uid"}}"#, "line 1, column 22: in .read: unknown variable $uid: no wildcard above this rule is named $uid"),
            (#"{"rules": {".read": "data.val"}}"#, "line 1, column 27: in .read: a data snapshot has no property 'val'; call it: val()"),
            (#"{"rules": {".read": "data.child('a').length > 2"}}"#, "line 1, column 38: in .read: a data snapshot has no property 'length'; use child('length')"),
            (#"{"rules": {".read": "'a'"}}"#, "line 1, column 22: in .read: a .read rule must be a boolean expression, and this one is a string"),
            (#"{"rules": {".read": "data.exists(1)"}}"#, "line 1, column 27: in .read: exists() takes no arguments, not 1"),
            (#"{"rules": {".read": "auth.uid.matches('x')"}}"#, "line 1, column 39: in .read: argument 1 of matches() must be a regular expression, not a string"),
            (#"{"rules": {".read": "auth.uid.matches(/(a/)"}}"#, "line 1, column 42: in .read: invalid regular expression: missing ')'"),
            (#"{"rules": {".read": "root.nope()"}}"#, "line 1, column 27: in .read: unknown method 'nope()'"),
            (#"{"rules": {".read": 1}}"#, "line 1, column 21: .read must be true, false or an expression in a string, not a number"),
            (#"{"rules": {".raed": true}}"#, "line 1, column 12: unknown rule \".raed\"; a location may have .read, .write, .validate and .indexOn"),
            (#"{"rules": {"$a": {}, "$b": {}}}"#, "line 1, column 22: two wildcards at one location ($a and $b); only one is allowed"),
            (#"{"rules": {"$a": {"$a": {}}}}"#, "line 1, column 19: the wildcard $a is already used above this location"),
            (#"{"rules": {"a#b": {}}}"#, "line 1, column 12: \"a#b\" is not a valid key: keys must not contain \".\", \"$\", \"#\", \"[\", \"]\" or \"/\" (found \"#\")"),
            (#"{"rules": {".indexOn": [1]}}"#, "line 1, column 25: .indexOn lists child names as strings"),
            (#"{"rulez": {}}"#, "line 1, column 2: unknown key \"rulez\" at the top level; the rules go in \"rules\""),
            ("{\n  \"rules\": {\n    /* a comment\n", "line 3, column 5: this comment has no closing */"),
            ("{\"rules\": {\".read\": \"auth != null\",}} trailing", "line 1, column 39: unexpected text after the rules object"),
            (#"{"rules": {"a": true}}"#, "line 1, column 17: rules for a location must be an object, not a boolean"),
        ]
        for (text, expected) in cases { XCTAssertEqual(refusal(text), expected, text) }
    }

    func testCommentsTrailingCommasAndEscapesAreAccepted() throws {
        let text = """
            {
              // line comment
              "rules": { /* block */
                ".read": "auth != null && auth.token.name == 'O\\u0041Brien'",
                "a": { ".write": true, },
              },
            }
            """
        XCTAssertEqual(refusal(text), "accepted")
        XCTAssertEqual(try SecurityRules(parsing: text).source, text)
    }

    /// A key spelled with an escaped surrogate pair is the character the pair names; half
    /// of a pair is refused where it stands.
    func testEscapedSurrogatePairsAreOneCharacter() throws {
        XCTAssertEqual(refusal(#"{"rules": {"\ud83d\ude00": {".read": true}}}"#), "accepted")
        XCTAssertEqual(refusal(#"{"rules": {"\ud83d": {".read": true}}}"#),
                       "line 1, column 13: a \\u escape names half of a surrogate pair")
    }

    /// Nesting, chains and sizes that would exhaust the stack are refused when loaded.
    func testDeepNestingIsRefusedNotACrash() {
        let parentheses = String(repeating: "(", count: 10_000) + "true" + String(repeating: ")", count: 10_000)
        XCTAssertTrue(refusal(#"{"rules": {".read": "\#(parentheses)"}}"#).contains("nested too deeply"))
        let nots = String(repeating: "!", count: 100_000) + "true"
        XCTAssertTrue(refusal(#"{"rules": {".read": "\#(nots)"}}"#).contains("nested too deeply"))
        let chain = Array(repeating: "true", count: 100_000).joined(separator: " && ")
        XCTAssertTrue(refusal(#"{"rules": {".read": "\#(chain)"}}"#).contains("nested too deeply"))
        let children = "data" + String(repeating: ".parent()", count: 100_000) + ".exists()"
        XCTAssertTrue(refusal(#"{"rules": {".read": "\#(children)"}}"#).contains("nested too deeply"))
        let levels = String(repeating: #"{"a": "#, count: 10_000) + "{}" + String(repeating: "}", count: 10_000)
        XCTAssertTrue(refusal(#"{"rules": \#(levels)}"#).contains("nested too deeply"))
        // What a real rule needs fits.
        let realistic = Array(repeating: "auth != null", count: 40).joined(separator: " && ")
        XCTAssertEqual(refusal(#"{"rules": {".read": "\#(realistic)"}}"#), "accepted")
    }

    func testTokensAsTheEmulatorTakesThem() throws {
        let now = 1_800_000_000.0
        XCTAssertEqual(try Identity.from(credential: "owner", now: now), .admin)
        let token = Identity.unsignedToken(uid: "ada", claims: .object([("admin", .bool(true))]), now: now)
        guard case let .user(uid, claims, expires) = try Identity.from(credential: token, now: now) else { return XCTFail("not a user") }
        XCTAssertEqual(uid, "ada")
        XCTAssertEqual(claims["admin"], .bool(true))
        XCTAssertEqual(claims["exp"], .number(now + 3600))
        // Unsigned, it never expires (the SDKs' mockUserToken says 1970); signed, it does.
        XCTAssertEqual(expires, nil)
        XCTAssertEqual(try Identity.from(credential: token, now: now + 3600), .user(uid: uid, claims: claims, expires: nil))
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        let signed = Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8)) + "." + parts[1] + ".c2ln"
        XCTAssertEqual(try Identity.from(credential: signed, now: now), .user(uid: uid, claims: claims, expires: now + 3600))
        XCTAssertThrowsError(try Identity.from(credential: signed, now: now + 3600)) { XCTAssertEqual($0 as? Identity.Refusal, .expired) }
        // "none" with a signature is no unsigned token.
        XCTAssertThrowsError(try Identity.from(credential: String(token.dropLast()) + ".c2ln", now: now + 3600))
        XCTAssertFalse(Identity.isUnsigned(token: String(token.dropLast()) + ".c2ln"))
        for bad in ["", "a.b", "a.b.c", "a.\(Base64URL.encode(Array("[1]".utf8))).c", "a.\(Base64URL.encode(Array("{}".utf8))).c"] {
            XCTAssertThrowsError(try Identity.from(credential: bad, now: now), bad)
        }
        // A legacy token's claims are under "d".
        let legacy = "x." + Base64URL.encode(Array(#"{"v":0,"iat":1,"d":{"uid":"bob","role":"x"}}"#.utf8)) + ".y"
        XCTAssertEqual(try Identity.from(credential: legacy, now: now), .user(uid: "bob", claims: .object([("uid", .string("bob")), ("role", .string("x"))]), expires: nil))
    }
    /// The default rules are built directly (not parsed at every start); they must be what
    /// their own text says: the same text, and the same answers as its parse.
    func testTheOpenRulesAreWhatTheirTextParsesTo() throws {
        let parsed = try SecurityRules(parsing: SecurityRules.open.source)
        XCTAssertEqual(SecurityRules.open.source, "{\n  \"rules\": {\n    \".read\": true,\n    \".write\": true\n  }\n}\n")
        let data = try JSONReader.parse(#"{"a": {"b": 1}}"#)
        let identities: [Identity] = [.anonymous, .user(uid: "u1", claims: .object([]), expires: nil)]
        for path in [Path.root, Path("a"), Path("a/b/c"), Path("a/.priority")] {
            for identity in identities {
                for rules in [parsed, SecurityRules.open] {
                    XCTAssertTrue(rules.canRead(path, identity: identity, query: nil, data: data, now: 0), "\(path)")
                    XCTAssertNil(rules.checkWrite([(path, try JSONReader.parse("2"))], identity: identity, before: data, after: data, now: 0), "\(path)")
                    XCTAssertEqual(rules.indexOn(at: path), [])
                    XCTAssertEqual(rules.readPatterns(path), [])
                }
            }
        }
    }

    /// Where a data path's rules are written: named levels by name, a wildcard's levels by
    /// the wildcard, and below where the rules stop, the data's own keys.
    func testTheRulesLocationOfADataPath() throws {
        let rules = try SecurityRules(parsing: #"{"rules": {"users": {".indexOn": "name"}, "rooms": {"$room": {"messages": {}, "admins": {"$uid": {}}}}, "$other": {"fixed": {}}}}"#)
        let cases: [(String, String)] = [
            ("/", "/"), ("/users", "/users"), ("/users/ada/posts", "/users/ada/posts"),
            ("/rooms/lobby/messages", "/rooms/$room/messages"), ("/rooms/lobby/admins/u1/x", "/rooms/$room/admins/$uid/x"),
            ("/rooms/lobby", "/rooms/$room"), ("/logs/fixed", "/$other/fixed"), ("/logs/2026", "/$other/2026"),
        ]
        for (path, location) in cases { XCTAssertEqual(rules.location(of: Path(path)), location, path) }
        XCTAssertEqual(SecurityRules.open.location(of: Path("a/b")), "/a/b")
    }
}
