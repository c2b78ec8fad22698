import XCTest
import RTDBData
@testable import RTDBRules

/// A trace names each rule evaluated, where it ran, and what each part of it was worth.
final class RuleTraceTests: XCTestCase {
    let rules = try! SecurityRules(parsing: """
        {"rules": {
          ".read": false,
          "users": {
            "$uid": {
              ".read": "auth != null && auth.uid == $uid",
              ".write": "auth.uid == $uid || auth.token.admin == true",
              "flags": { ".write": "auth != null && (auth.token.admin == true || auth.token.editor == true)" },
              "age": { ".validate": "newData.isNumber() && newData.val() >= 0" }
            }
          },
          "rooms": {
            "$room": {
              ".read": "root.child('members/' + $room + '/' + auth.uid).exists()",
              ".write": "data.exists() ? data.child('owner').val() == auth.uid : newData.hasChildren(['owner'])"
            }
          }
        }}
        """)
    let data = try! JSONReader.parse(#"{"members": {"r1": {"ada": true}}, "rooms": {"r1": {"owner": "ada"}}}"#)

    func user(_ uid: String, _ claims: String = "{}") -> Identity {
        .user(uid: uid, claims: try! JSONValue.parse(claims), expires: nil)
    }

    func readTrace(_ path: String, as identity: Identity) -> (Bool, [String]) {
        let trace = RuleTrace()
        let allowed = rules.canRead(Path(path), identity: identity, query: nil, data: data, now: 0, trace: trace)
        return (allowed, trace.steps.map(\.line))
    }

    func writeTrace(_ path: String, _ value: String, as identity: Identity) -> (SecurityRules.Denial?, [String]) {
        let trace = RuleTrace()
        let sets = [(Path(path), try! JSONReader.parse(value))]
        let after = LogRecordless.apply(sets, to: data)
        let denial = rules.checkWrite(sets, identity: identity, before: data, after: after, now: 0, trace: trace)
        return (denial, trace.steps.map(\.line))
    }

    func testReadsNameEveryRuleOnTheWay() {
        XCTAssertEqual(readTrace("users/bob", as: user("alice")).1, [
            "/.read: false → false",
            #"/users/$uid/.read at /users/bob: auth != null && auth.uid == $uid → (auth(uid "alice") != null) && ("alice" == "bob") → false"#,
        ])
        XCTAssertEqual(readTrace("users/ada", as: user("ada")).1.last,
                       #"/users/$uid/.read at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true"#)
        // No one signed in: the first operand is false, the second is never evaluated.
        XCTAssertEqual(readTrace("users/ada", as: .anonymous).1.last,
                       "/users/$uid/.read at /users/ada: auth != null && auth.uid == $uid → (null != null) && auth.uid == $uid → false")
        XCTAssertEqual(readTrace("rooms/r1", as: user("bob")).1.last,
                       #"/rooms/$room/.read at /rooms/r1: root.child('members/' + $room + '/' + auth.uid).exists() → false"#)
    }

    func testWritesShowErrorsAlternativesAndValidation() {
        let (denial, lines) = writeTrace("users/bob/name", #""Bob""#, as: .anonymous)
        XCTAssertEqual(denial, .permission(Path("users/bob/name")))
        XCTAssertEqual(lines, [
            // An error makes the whole rule false: what follows it is not evaluated.
            "/users/$uid/.write at /users/bob: auth.uid == $uid || auth.token.admin == true → ((error: cannot read 'uid' of null) == $uid) || auth.token.admin == true → false",
        ])
        XCTAssertEqual(writeTrace("users/bob/name", #""Bob""#, as: user("ops", #"{"admin": true}"#)).1, [
            #"/users/$uid/.write at /users/bob: auth.uid == $uid || auth.token.admin == true → ("ops" == "bob") || (true == true) → true"#,
        ])
        let (invalid, steps) = writeTrace("users/ada/age", "-3", as: user("ada"))
        XCTAssertEqual(invalid, .validation(Path("users/ada/age")))
        XCTAssertEqual(steps.last, "/users/$uid/age/.validate at /users/ada/age: newData.isNumber() && newData.val() >= 0 → true && (-3 >= 0) → false")
        // Parentheses keep their grouping where a part is shown by its text.
        XCTAssertEqual(writeTrace("users/bob/flags", "1", as: .anonymous).1.last,
                       "/users/$uid/flags/.write at /users/bob/flags: auth != null && (auth.token.admin == true || auth.token.editor == true) → (null != null) && (auth.token.admin == true || auth.token.editor == true) → false")
        // The branch of ?: taken is shown; the other is not evaluated.
        XCTAssertEqual(writeTrace("rooms/r1/title", #""x""#, as: user("bob")).1.last,
                       #"/rooms/$room/.write at /rooms/r1: data.exists() ? data.child('owner').val() == auth.uid : newData.hasChildren(['owner']) → true ? ("ada" == "bob") → false"#)
    }
}

/// A write's tree after it, as the engine makes it (without the engine).
private enum LogRecordless {
    static func apply(_ sets: [(Path, Node)], to root: Node) -> Node {
        sets.reduce(root) { $0.setting($1.0, to: $1.1) }
    }
}
