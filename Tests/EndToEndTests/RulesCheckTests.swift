import Foundation
import XCTest

/// `rules check` as a user runs it, on an embedded database (`--rules`) and on a server (its
/// own rules), against a table of cases with the exact verdict and trace each prints; and the
/// denials among them made for real by a shell signed in as that user, whose errors carry the
/// same trace.
final class RulesCheckTests: XCTestCase {
    /// Wildcards, `root`, `data` and `newData`, `auth.token` claims, `.validate` on children
    /// and on a wildcard's siblings, `now` and server values, a regular expression.
    static let rules = #"""
        {
          // Each user reads and writes their own profile; an admin claim reads and writes all.
          "rules": {
            ".read": "auth != null && auth.token.admin == true",
            ".write": "auth != null && auth.token.admin == true",
            "users": {
              "$uid": {
                ".read": "auth != null && auth.uid == $uid",
                ".write": "auth != null && auth.uid == $uid",
                ".validate": "newData.hasChildren(['name'])",
                "name": { ".validate": "newData.isString() && newData.val().length > 0 && newData.val().length <= 20" },
                "age": { ".validate": "newData.isNumber() && newData.val() >= 0" },
                "$other": { ".validate": "$other == 'email' || $other == 'bio'" }
              }
            },
            "rooms": {
              "$room": {
                ".read": "root.child('members').child($room).child(auth.uid).exists()",
                ".write": "!data.exists() || data.child('owner').val() == auth.uid",
                "messages": {
                  "$msg": {
                    ".write": "root.child('members/' + $room + '/' + auth.uid).val() == true && !data.exists()",
                    ".validate": "newData.hasChildren(['text', 'by']) && newData.child('by').val() == auth.uid && newData.child('text').isString()"
                  }
                }
              }
            },
            "members": { "$room": { "$uid": { ".validate": "newData.isBoolean()" } } },
            "posts": {
              ".read": true,
              "$post": {
                ".write": "auth.token.role == 'editor' || (auth.token.email_verified == true && auth.token.email.matches(/.*@example[.]com$/))",
                "at": { ".validate": "newData.val() <= now" },
                "title": { ".validate": "newData.isString()" }
              }
            },
            "counters": {
              "$counter": { ".write": "newData.isNumber() && newData.val() == (data.exists() ? data.val() : 0) + 1" }
            }
          }
        }
        """#

    static let seed = #"""
        set /members {"r1": {"ada": true, "bob": true}}
        set /rooms {"r1": {"owner": "ada", "messages": {"m1": {"text": "hi", "by": "ada"}}}}
        set /users {"ada": {"name": "Ada", "age": 36}, "bob": {"name": "Bob"}}
        set /counters/visits 5
        set /posts {"p1": {"title": "Hello", "at": 1}}
        """#

    /// A question (`read|write|update PATH [VALUE] [--as UID] [--claims JSON]`) and what
    /// `rules check` prints for it on the seeded data, `now` as NOW.
    struct Case {
        let question: String
        let expected: String

        init(_ question: String, _ expected: String) {
            self.question = question
            self.expected = expected
        }

        /// The question's parts: operation, path, value, uid, claims.
        var parts: (operation: String, path: String, value: String?, uid: String?, claims: String?) {
            let pattern = try! NSRegularExpression(pattern: #"^(read|write|update) (\S+)(?: (.+?))??(?: --as (\S+))?(?: --claims (\{.*\}))?$"#)
            let text = question as NSString
            let match = pattern.firstMatch(in: question, range: NSRange(location: 0, length: text.length))!
            func group(_ i: Int) -> String? {
                let range = match.range(at: i)
                return range.location == NSNotFound ? nil : text.substring(with: range)
            }
            return (group(1)!, group(2)!, group(3), group(4), group(5))
        }

        var denied: Bool { expected.hasPrefix("denied") }
    }

    static let cases: [Case] = [
        Case(#"read / --as ada"#, #"""
            denied: read at / as uid ada: no .read rule allows this read
              /.read: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
            """#),
        Case(#"read / --as root --claims {"admin": true}"#, #"""
            allowed: read at / as uid root
              /.read: auth != null && auth.token.admin == true → (auth(uid "root") != null) && (true == true) → true
            """#),
        Case(#"read /"#, #"""
            denied: read at / as no one (no credential): no .read rule allows this read
              /.read: auth != null && auth.token.admin == true → (null != null) && auth.token.admin == true → false
            """#),
        Case(#"read /users/ada --as ada"#, #"""
            allowed: read at /users/ada as uid ada
              /.read: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.read at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
            """#),
        Case(#"read /users/ada --as bob"#, #"""
            denied: read at /users/ada as uid bob: no .read rule allows this read
              /.read: auth != null && auth.token.admin == true → (auth(uid "bob") != null) && (null == true) → false
              /users/$uid/.read at /users/ada: auth != null && auth.uid == $uid → (auth(uid "bob") != null) && ("bob" == "ada") → false
            """#),
        Case(#"read /users/ada/name --as ada"#, #"""
            allowed: read at /users/ada/name as uid ada
              /.read: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.read at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
            """#),
        Case(#"read /users --as ada"#, #"""
            denied: read at /users as uid ada: no .read rule allows this read
              /.read: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
            """#),
        Case(#"read /users/ada --as root --claims {"admin": true}"#, #"""
            allowed: read at /users/ada as uid root
              /.read: auth != null && auth.token.admin == true → (auth(uid "root") != null) && (true == true) → true
            """#),
        Case(#"read /rooms/r1 --as bob"#, #"""
            allowed: read at /rooms/r1 as uid bob
              /.read: auth != null && auth.token.admin == true → (auth(uid "bob") != null) && (null == true) → false
              /rooms/$room/.read at /rooms/r1: root.child('members').child($room).child(auth.uid).exists() → true
            """#),
        Case(#"read /rooms/r1 --as cy"#, #"""
            denied: read at /rooms/r1 as uid cy: no .read rule allows this read
              /.read: auth != null && auth.token.admin == true → (auth(uid "cy") != null) && (null == true) → false
              /rooms/$room/.read at /rooms/r1: root.child('members').child($room).child(auth.uid).exists() → false
            """#),
        Case(#"read /rooms/r2 --as ada"#, #"""
            denied: read at /rooms/r2 as uid ada: no .read rule allows this read
              /.read: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /rooms/$room/.read at /rooms/r2: root.child('members').child($room).child(auth.uid).exists() → false
            """#),
        Case(#"read /posts"#, #"""
            allowed: read at /posts as no one (no credential)
              /.read: auth != null && auth.token.admin == true → (null != null) && auth.token.admin == true → false
              /posts/.read: true → true
            """#),
        Case(#"read /posts/p1/title"#, #"""
            allowed: read at /posts/p1/title as no one (no credential)
              /.read: auth != null && auth.token.admin == true → (null != null) && auth.token.admin == true → false
              /posts/.read: true → true
            """#),
        Case(#"read /counters/visits --as ada"#, #"""
            denied: read at /counters/visits as uid ada: no .read rule allows this read
              /.read: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
            """#),
        Case(#"write /users/ada {"name": "Ada L."} --as ada"#, #"""
            allowed: write at /users/ada as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → true
              /users/$uid/name/.validate at /users/ada/name: newData.isString() && newData.val().length > 0 && newData.val().length <= 20 → (true && (6 > 0)) && (6 <= 20) → true
            """#),
        Case(#"write /users/ada {"name": "Ada"} --as bob"#, #"""
            denied: write at /users/ada as uid bob: no .write rule allows this write
              /.write: auth != null && auth.token.admin == true → (auth(uid "bob") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "bob") != null) && ("bob" == "ada") → false
            """#),
        Case(#"write /users/ada {"age": 36} --as ada"#, #"""
            denied: write at /users/ada as uid ada: the .validate rule at /users/ada refuses the new data
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → false
            """#),
        Case(#"write /users/ada/name "" --as ada"#, #"""
            denied: write at /users/ada/name as uid ada: the .validate rule at /users/ada/name refuses the new data
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → true
              /users/$uid/name/.validate at /users/ada/name: newData.isString() && newData.val().length > 0 && newData.val().length <= 20 → (true && (0 > 0)) && newData.val().length <= 20 → false
            """#),
        Case(#"write /users/ada/name "Augusta Ada King-Noel, Countess of Lovelace" --as ada"#, #"""
            denied: write at /users/ada/name as uid ada: the .validate rule at /users/ada/name refuses the new data
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → true
              /users/$uid/name/.validate at /users/ada/name: newData.isString() && newData.val().length > 0 && newData.val().length <= 20 → (true && (43 > 0)) && (43 <= 20) → false
            """#),
        Case(#"write /users/ada/age -1 --as ada"#, #"""
            denied: write at /users/ada/age as uid ada: the .validate rule at /users/ada/age refuses the new data
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → true
              /users/$uid/age/.validate at /users/ada/age: newData.isNumber() && newData.val() >= 0 → true && (-1 >= 0) → false
            """#),
        Case(#"write /users/ada/age 37 --as ada"#, #"""
            allowed: write at /users/ada/age as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → true
              /users/$uid/age/.validate at /users/ada/age: newData.isNumber() && newData.val() >= 0 → true && (37 >= 0) → true
            """#),
        Case(#"write /users/ada/email ada@example.com --as ada"#, #"""
            allowed: write at /users/ada/email as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → true
              /users/$uid/$other/.validate at /users/ada/email: $other == 'email' || $other == 'bio' → ("email" == "email") || $other == 'bio' → true
            """#),
        Case(#"write /users/ada/phone "555-0100" --as ada"#, #"""
            denied: write at /users/ada/phone as uid ada: the .validate rule at /users/ada/phone refuses the new data
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → true
              /users/$uid/$other/.validate at /users/ada/phone: $other == 'email' || $other == 'bio' → ("phone" == "email") || ("phone" == "bio") → false
            """#),
        Case(#"write /users/ada null --as ada"#, #"""
            allowed: write at /users/ada as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
            """#),
        Case(#"write /users/cy {"name": "Cy"}"#, #"""
            denied: write at /users/cy as no one (no credential): no .write rule allows this write
              /.write: auth != null && auth.token.admin == true → (null != null) && auth.token.admin == true → false
              /users/$uid/.write at /users/cy: auth != null && auth.uid == $uid → (null != null) && auth.uid == $uid → false
            """#),
        Case(#"write /users/cy {"name": "Cy"} --as cy"#, #"""
            allowed: write at /users/cy as uid cy
              /.write: auth != null && auth.token.admin == true → (auth(uid "cy") != null) && (null == true) → false
              /users/$uid/.write at /users/cy: auth != null && auth.uid == $uid → (auth(uid "cy") != null) && ("cy" == "cy") → true
              /users/$uid/.validate at /users/cy: newData.hasChildren(['name']) → true
              /users/$uid/name/.validate at /users/cy/name: newData.isString() && newData.val().length > 0 && newData.val().length <= 20 → (true && (2 > 0)) && (2 <= 20) → true
            """#),
        Case(#"write /rooms/r2 {"owner": "cy"} --as cy"#, #"""
            allowed: write at /rooms/r2 as uid cy
              /.write: auth != null && auth.token.admin == true → (auth(uid "cy") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r2: !data.exists() || data.child('owner').val() == auth.uid → !false || data.child('owner').val() == auth.uid → true
            """#),
        Case(#"write /rooms/r1 {"owner": "bob"} --as bob"#, #"""
            denied: write at /rooms/r1 as uid bob: no .write rule allows this write
              /.write: auth != null && auth.token.admin == true → (auth(uid "bob") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r1: !data.exists() || data.child('owner').val() == auth.uid → !true || ("ada" == "bob") → false
            """#),
        Case(#"write /rooms/r1/owner bob --as ada"#, #"""
            allowed: write at /rooms/r1/owner as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r1: !data.exists() || data.child('owner').val() == auth.uid → !true || ("ada" == "ada") → true
            """#),
        Case(#"write /rooms/r1/messages/m2 {"text": "hello", "by": "bob"} --as bob"#, #"""
            allowed: write at /rooms/r1/messages/m2 as uid bob
              /.write: auth != null && auth.token.admin == true → (auth(uid "bob") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r1: !data.exists() || data.child('owner').val() == auth.uid → !true || ("ada" == "bob") → false
              /rooms/$room/messages/$msg/.write at /rooms/r1/messages/m2: root.child('members/' + $room + '/' + auth.uid).val() == true && !data.exists() → (true == true) && !false → true
              /rooms/$room/messages/$msg/.validate at /rooms/r1/messages/m2: newData.hasChildren(['text', 'by']) && newData.child('by').val() == auth.uid && newData.child('text').isString() → (true && ("bob" == "bob")) && true → true
            """#),
        Case(#"write /rooms/r1/messages/m2 {"text": "hello", "by": "ada"} --as bob"#, #"""
            denied: write at /rooms/r1/messages/m2 as uid bob: the .validate rule at /rooms/r1/messages/m2 refuses the new data
              /.write: auth != null && auth.token.admin == true → (auth(uid "bob") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r1: !data.exists() || data.child('owner').val() == auth.uid → !true || ("ada" == "bob") → false
              /rooms/$room/messages/$msg/.write at /rooms/r1/messages/m2: root.child('members/' + $room + '/' + auth.uid).val() == true && !data.exists() → (true == true) && !false → true
              /rooms/$room/messages/$msg/.validate at /rooms/r1/messages/m2: newData.hasChildren(['text', 'by']) && newData.child('by').val() == auth.uid && newData.child('text').isString() → (true && ("ada" == "bob")) && newData.child('text').isString() → false
            """#),
        Case(#"write /rooms/r1/messages/m1 {"text": "edited", "by": "ada"} --as ada"#, #"""
            allowed: write at /rooms/r1/messages/m1 as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r1: !data.exists() || data.child('owner').val() == auth.uid → !true || ("ada" == "ada") → true
              /rooms/$room/messages/$msg/.validate at /rooms/r1/messages/m1: newData.hasChildren(['text', 'by']) && newData.child('by').val() == auth.uid && newData.child('text').isString() → (true && ("ada" == "ada")) && true → true
            """#),
        Case(#"write /rooms/r1/messages/m1 {"text": "edited", "by": "bob"} --as bob"#, #"""
            denied: write at /rooms/r1/messages/m1 as uid bob: no .write rule allows this write
              /.write: auth != null && auth.token.admin == true → (auth(uid "bob") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r1: !data.exists() || data.child('owner').val() == auth.uid → !true || ("ada" == "bob") → false
              /rooms/$room/messages/$msg/.write at /rooms/r1/messages/m1: root.child('members/' + $room + '/' + auth.uid).val() == true && !data.exists() → (true == true) && !true → false
            """#),
        Case(#"write /rooms/r1/messages/m3 {"text": 5, "by": "bob"} --as bob"#, #"""
            denied: write at /rooms/r1/messages/m3 as uid bob: the .validate rule at /rooms/r1/messages/m3 refuses the new data
              /.write: auth != null && auth.token.admin == true → (auth(uid "bob") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r1: !data.exists() || data.child('owner').val() == auth.uid → !true || ("ada" == "bob") → false
              /rooms/$room/messages/$msg/.write at /rooms/r1/messages/m3: root.child('members/' + $room + '/' + auth.uid).val() == true && !data.exists() → (true == true) && !false → true
              /rooms/$room/messages/$msg/.validate at /rooms/r1/messages/m3: newData.hasChildren(['text', 'by']) && newData.child('by').val() == auth.uid && newData.child('text').isString() → (true && ("bob" == "bob")) && false → false
            """#),
        Case(#"write /rooms/r1/messages/m3 {"text": "hi", "by": "cy"} --as cy"#, #"""
            denied: write at /rooms/r1/messages/m3 as uid cy: no .write rule allows this write
              /.write: auth != null && auth.token.admin == true → (auth(uid "cy") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r1: !data.exists() || data.child('owner').val() == auth.uid → !true || ("ada" == "cy") → false
              /rooms/$room/messages/$msg/.write at /rooms/r1/messages/m3: root.child('members/' + $room + '/' + auth.uid).val() == true && !data.exists() → (null == true) && !data.exists() → false
            """#),
        Case(#"write /members/r1/cy true --as ada"#, #"""
            denied: write at /members/r1/cy as uid ada: no .write rule allows this write
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
            """#),
        Case(#"write /members/r1/cy true --as root --claims {"admin": true}"#, #"""
            allowed: write at /members/r1/cy as uid root
              /.write: auth != null && auth.token.admin == true → (auth(uid "root") != null) && (true == true) → true
              /members/$room/$uid/.validate at /members/r1/cy: newData.isBoolean() → true
            """#),
        Case(#"write /members/r1/cy yes --as root --claims {"admin": true}"#, #"""
            denied: write at /members/r1/cy as uid root: the .validate rule at /members/r1/cy refuses the new data
              /.write: auth != null && auth.token.admin == true → (auth(uid "root") != null) && (true == true) → true
              /members/$room/$uid/.validate at /members/r1/cy: newData.isBoolean() → false
            """#),
        Case(#"write /posts/p2 {"title": "Hi", "at": now()} --as ed --claims {"role": "editor"}"#, #"""
            allowed: write at /posts/p2 as uid ed
              /.write: auth != null && auth.token.admin == true → (auth(uid "ed") != null) && (null == true) → false
              /posts/$post/.write at /posts/p2: auth.token.role == 'editor' || (auth.token.email_verified == true && auth.token.email.matches(/.*@example[.]com$/)) → ("editor" == "editor") || (auth.token.email_verified == true && auth.token.email.matches(/.*@example[.]com$/)) → true
              /posts/$post/at/.validate at /posts/p2/at: newData.val() <= now → NOW <= NOW → true
              /posts/$post/title/.validate at /posts/p2/title: newData.isString() → true
            """#),
        Case(#"write /posts/p2 {"title": "Hi", "at": 99999999999999} --as ed --claims {"role": "editor"}"#, #"""
            denied: write at /posts/p2 as uid ed: the .validate rule at /posts/p2/at refuses the new data
              /.write: auth != null && auth.token.admin == true → (auth(uid "ed") != null) && (null == true) → false
              /posts/$post/.write at /posts/p2: auth.token.role == 'editor' || (auth.token.email_verified == true && auth.token.email.matches(/.*@example[.]com$/)) → ("editor" == "editor") || (auth.token.email_verified == true && auth.token.email.matches(/.*@example[.]com$/)) → true
              /posts/$post/at/.validate at /posts/p2/at: newData.val() <= now → 99999999999999 <= NOW → false
            """#),
        Case(#"write /posts/p2 {"title": "Hi"} --as ann --claims {"email": "ann@example.com", "email_verified": true}"#, #"""
            allowed: write at /posts/p2 as uid ann
              /.write: auth != null && auth.token.admin == true → (auth(uid "ann") != null) && (null == true) → false
              /posts/$post/.write at /posts/p2: auth.token.role == 'editor' || (auth.token.email_verified == true && auth.token.email.matches(/.*@example[.]com$/)) → (null == "editor") || ((true == true) && true) → true
              /posts/$post/title/.validate at /posts/p2/title: newData.isString() → true
            """#),
        Case(#"write /posts/p2 {"title": "Hi"} --as eve --claims {"email": "eve@example.com.evil.org", "email_verified": true}"#, #"""
            denied: write at /posts/p2 as uid eve: no .write rule allows this write
              /.write: auth != null && auth.token.admin == true → (auth(uid "eve") != null) && (null == true) → false
              /posts/$post/.write at /posts/p2: auth.token.role == 'editor' || (auth.token.email_verified == true && auth.token.email.matches(/.*@example[.]com$/)) → (null == "editor") || ((true == true) && false) → false
            """#),
        Case(#"write /posts/p2 {"title": "Hi"} --as ann --claims {"email": "ann@example.com"}"#, #"""
            denied: write at /posts/p2 as uid ann: no .write rule allows this write
              /.write: auth != null && auth.token.admin == true → (auth(uid "ann") != null) && (null == true) → false
              /posts/$post/.write at /posts/p2: auth.token.role == 'editor' || (auth.token.email_verified == true && auth.token.email.matches(/.*@example[.]com$/)) → (null == "editor") || ((null == true) && auth.token.email.matches(/.*@example[.]com$/)) → false
            """#),
        Case(#"write /counters/visits 6 --as ada"#, #"""
            allowed: write at /counters/visits as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /counters/$counter/.write at /counters/visits: newData.isNumber() && newData.val() == (data.exists() ? data.val() : 0) + 1 → true && (6 == 6) → true
            """#),
        Case(#"write /counters/visits 7 --as ada"#, #"""
            denied: write at /counters/visits as uid ada: no .write rule allows this write
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /counters/$counter/.write at /counters/visits: newData.isNumber() && newData.val() == (data.exists() ? data.val() : 0) + 1 → true && (7 == 6) → false
            """#),
        Case(#"write /counters/visits increment(1) --as ada"#, #"""
            allowed: write at /counters/visits as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /counters/$counter/.write at /counters/visits: newData.isNumber() && newData.val() == (data.exists() ? data.val() : 0) + 1 → true && (6 == 6) → true
            """#),
        Case(#"write /counters/hits 1 --as ada"#, #"""
            allowed: write at /counters/hits as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /counters/$counter/.write at /counters/hits: newData.isNumber() && newData.val() == (data.exists() ? data.val() : 0) + 1 → true && (1 == 1) → true
            """#),
        Case(#"update /users {"ada/age": 40, "bob/age": 30} --as ada"#, #"""
            denied: update at /users as uid ada: no .write rule allows this write
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/bob: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "bob") → false
            """#),
        Case(#"update /users {"ada/age": 40, "ada/email": "ada@example.com"} --as ada"#, #"""
            allowed: update at /users as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → true
              /users/$uid/age/.validate at /users/ada/age: newData.isNumber() && newData.val() >= 0 → true && (40 >= 0) → true
              /users/$uid/$other/.validate at /users/ada/email: $other == 'email' || $other == 'bio' → ("email" == "email") || $other == 'bio' → true
            """#),
        Case(#"update / {"users/ada/name": "Ada", "rooms/r1/owner": "ada"} --as ada"#, #"""
            allowed: update at / as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r1: !data.exists() || data.child('owner').val() == auth.uid → !true || ("ada" == "ada") → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → true
              /users/$uid/name/.validate at /users/ada/name: newData.isString() && newData.val().length > 0 && newData.val().length <= 20 → (true && (3 > 0)) && (3 <= 20) → true
            """#),
        Case(#"update /rooms/r1/messages {"m4": {"text": "a", "by": "bob"}, "m5": {"text": "b"}} --as bob"#, #"""
            denied: update at /rooms/r1/messages as uid bob: the .validate rule at /rooms/r1/messages/m5 refuses the new data
              /.write: auth != null && auth.token.admin == true → (auth(uid "bob") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r1: !data.exists() || data.child('owner').val() == auth.uid → !true || ("ada" == "bob") → false
              /rooms/$room/messages/$msg/.write at /rooms/r1/messages/m4: root.child('members/' + $room + '/' + auth.uid).val() == true && !data.exists() → (true == true) && !false → true
              /.write: auth != null && auth.token.admin == true → (auth(uid "bob") != null) && (null == true) → false
              /rooms/$room/.write at /rooms/r1: !data.exists() || data.child('owner').val() == auth.uid → !true || ("ada" == "bob") → false
              /rooms/$room/messages/$msg/.write at /rooms/r1/messages/m5: root.child('members/' + $room + '/' + auth.uid).val() == true && !data.exists() → (true == true) && !false → true
              /rooms/$room/messages/$msg/.validate at /rooms/r1/messages/m4: newData.hasChildren(['text', 'by']) && newData.child('by').val() == auth.uid && newData.child('text').isString() → (true && ("bob" == "bob")) && true → true
              /rooms/$room/messages/$msg/.validate at /rooms/r1/messages/m5: newData.hasChildren(['text', 'by']) && newData.child('by').val() == auth.uid && newData.child('text').isString() → (false && newData.child('by').val() == auth.uid) && newData.child('text').isString() → false
            """#),
        Case(#"update / {"users/ada/name": "A", "counters/visits": 6} --as ada"#, #"""
            allowed: update at / as uid ada
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /counters/$counter/.write at /counters/visits: newData.isNumber() && newData.val() == (data.exists() ? data.val() : 0) + 1 → true && (6 == 6) → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → true
              /users/$uid/name/.validate at /users/ada/name: newData.isString() && newData.val().length > 0 && newData.val().length <= 20 → (true && (1 > 0)) && (1 <= 20) → true
            """#),
        Case(#"update /users {"ada/name": null} --as ada"#, #"""
            denied: update at /users as uid ada: the .validate rule at /users/ada refuses the new data
              /.write: auth != null && auth.token.admin == true → (auth(uid "ada") != null) && (null == true) → false
              /users/$uid/.write at /users/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true
              /users/$uid/.validate at /users/ada: newData.hasChildren(['name']) → false
            """#),
    ]

    /// Clock readings (`now`, a written `now()`) vary from run to run.
    static func timeless(_ text: String) -> String {
        text.replacingOccurrences(of: #"\b17[0-9]{11}\b"#, with: "NOW", options: .regularExpression)
    }

    private var folder: String!

    override func setUpWithError() throws {
        folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.rules.write(toFile: folder + "/rules.json", atomically: true, encoding: .utf8)
        try "owner\n".write(toFile: folder + "/token.txt", atomically: true, encoding: .utf8)
    }

    /// What `rules check` printed, one verdict and its trace per case.
    static func verdicts(_ output: String) -> [String] {
        var blocks: [String] = []
        for line in timeless(output).split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if line.hasPrefix("allowed") || line.hasPrefix("denied") || blocks.isEmpty { blocks.append(String(line)) } else { blocks[blocks.count - 1] += "\n" + line }
        }
        return blocks
    }

    func assertTable(_ output: String, file: StaticString = #filePath, line: UInt = #line) {
        let verdicts = Self.verdicts(output)
        XCTAssertEqual(verdicts.count, Self.cases.count, file: file, line: line)
        for (case_, verdict) in zip(Self.cases, verdicts) {
            XCTAssertEqual(verdict, case_.expected, case_.question, file: file, line: line)
        }
    }

    func testTheTableOnAnEmbeddedDatabase() throws {
        XCTAssertGreaterThanOrEqual(Self.cases.count, 40)
        let data = folder + "/data"
        XCTAssertEqual(try Binary.run(["--data", data], input: Self.seed).status, 0)
        let script = Self.cases.map { "rules check \($0.question) --rules rules.json\n" }.joined()
        let result = try Binary.run(["--data", data, "--keep-going"], input: script, in: folder)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(result.status, 1, "denied cases fail the script")
        assertTable(result.stdout)
        // Nothing was written: the data is the seed's.
        XCTAssertEqual(try Binary.run(["--data", data, "get", "/users", "--json"]).stdout,
                       #"{"ada":{"age":36,"name":"Ada"},"bob":{"name":"Bob"}}"# + "\n")
    }

    /// On a server, its own rules; then each denial made for real by a shell signed in as that
    /// user (or no one), whose error carries the reason and the trace `rules check` printed.
    func testTheTableOnAServerAndItsRefusals() throws {
        let (server, port) = try Binary.startServer(folder: folder + "/server", arguments: ["--rules", folder + "/rules.json"])
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let url = "ws://127.0.0.1:\(port)?ns=table"
        let script = "auth token.txt\n" + Self.seed + "\n" + Self.cases.map { "rules check \($0.question)\n" }.joined()
        let checked = try Binary.run(["--url", url, "--no-persistence", "--keep-going"], input: script, in: folder)
        XCTAssertEqual(checked.stderr, "authenticated as owner (from token.txt)\n")
        XCTAssertEqual(checked.status, 1)
        assertTable(checked.stdout)

        var replay = ""
        var expected: [String] = []
        for case_ in Self.cases where case_.denied {
            let (operation, path, value, uid, claims) = case_.parts
            replay += uid.map { "auth --uid \($0)" + (claims.map { " --claims \($0)" } ?? "") } ?? "logout"
            replay += "\n" + ["read": "get", "write": "set", "update": "update"][operation]! + " \(path)" + (value.map { " " + $0 } ?? "") + "\n"
            let lines = case_.expected.components(separatedBy: "\n")
            let reason = lines[0].components(separatedBy: ": ").dropFirst(2).joined(separator: ": ")
            let steps = lines.dropFirst().map { String($0.dropFirst(2)) }
            if operation == "read" {
                expected.append("PERMISSION_DENIED: Permission denied: \(reason): " + steps.joined(separator: "; "))
            } else {
                // A refused .validate is the one rule that decided.
                let shown = reason.hasPrefix("the .validate rule") ? [steps.last!] : steps
                expected.append("write rejected: PERMISSION_DENIED at \(path): Permission denied: \(reason): " + shown.joined(separator: "; "))
            }
        }
        let made = try Binary.run(["--url", url, "--no-persistence", "--keep-going"], input: replay, in: folder)
        let errors = made.stderr.split(separator: "\n").filter { $0.hasPrefix("error: ") }.map {
            Self.timeless(String($0).replacingOccurrences(of: #"^error: line [0-9]+: "#, with: "", options: .regularExpression))
        }
        XCTAssertEqual(errors.count, expected.count, made.stderr)
        for (error, expected) in zip(errors, expected) { XCTAssertEqual(error, expected) }
        // The owner reads the data as the seed left it: every refusal wrote nothing.
        let users = try Binary.run(["--url", url, "--no-persistence", "-c", "auth token.txt", "-c", "get /users --json"], in: folder)
        XCTAssertEqual(users.stdout, #"{"ada":{"age":36,"name":"Ada"},"bob":{"name":"Bob"}}"# + "\n")
    }

    /// The exit status says the verdict; --json gives it as data; a mistake in the question or
    /// the rules is an error with its place, and the rules are needed where the database has none.
    func testStatusJSONAndMistakes() throws {
        let data = ["--data", folder + "/data"]
        XCTAssertEqual(try Binary.run(data, input: Self.seed).status, 0)
        func run(_ line: String) throws -> Binary.Result { try Binary.run(data + ["-c", line], in: folder) }
        XCTAssertEqual(try run("rules check read /users/ada --as ada --rules rules.json").status, 0)
        XCTAssertEqual(try run("rules check read /users/ada --as bob --rules rules.json").status, 1)
        let json = try run(#"rules check write /users/ada/age "old" --as ada --rules rules.json --json"#)
        XCTAssertEqual(json.status, 1)
        XCTAssertEqual(json.stdout, #"""
            {"allowed":false,"reason":"the .validate rule at /users/ada/age refuses the new data","trace":[{"rule":"/.write","path":"/","text":"auth != null && auth.token.admin == true","values":"(auth(uid \"ada\") != null) && (null == true)","result":false},{"rule":"/users/$uid/.write","path":"/users/ada","text":"auth != null && auth.uid == $uid","values":"(auth(uid \"ada\") != null) && (\"ada\" == \"ada\")","result":true},{"rule":"/users/$uid/.validate","path":"/users/ada","text":"newData.hasChildren(['name'])","values":"true","result":true},{"rule":"/users/$uid/age/.validate","path":"/users/ada/age","text":"newData.isNumber() && newData.val() >= 0","values":"false && newData.val() >= 0","result":false}]}

            """#)
        try #"{"rules": {".read": "auth.uid =="}}"#.write(toFile: folder + "/broken.json", atomically: true, encoding: .utf8)
        let mistakes: [(String, String)] = [
            ("rules check delete /a", "error: -c 1, column 13: rules check asks of a read, a write or an update, not 'delete'"),
            ("rules check write /a --rules rules.json", "error: -c 1, column 6: rules check write needs a path and a value (null for a removal): usage: rules get | rules set FILE | rules check read|write|update PATH [VALUE] [--as UID] [--claims JSON] [--rules FILE] | rules coverage"),
            ("rules check read /a --claims {} --rules rules.json", "error: -c 1, column 30: --claims goes with --as"),
            ("rules check read /a --as ada --claims [1] --rules rules.json", "error: -c 1, column 39: --claims needs a JSON object, as in --claims '{\"admin\": true}'"),
            ("rules get --as ada", "error: -c 1, column 11: --as goes with rules check"),
            ("rules check read /a --as ada", "error: -c 1: an embedded database has no rules of its own: give the rules to check with --rules FILE"),
            ("rules check read /a --rules broken.json", "error: -c 1: broken.json:1:33: in .read: expected a value, found the end of the expression"),
            ("rules check read /a --rules missing.json", "error: -c 1: cannot read missing.json: no such file"),
        ]
        for (line, message) in mistakes {
            let result = try run(line)
            XCTAssertEqual(result.status, 1, line)
            XCTAssertEqual(result.stderr.components(separatedBy: "\n").first, message, line)
        }
    }

    /// At a terminal the verdict is coloured, green allowed and red denied, unless the line
    /// says --no-color.
    func testTheVerdictIsColouredAtATerminal() throws {
        let data = folder + "/data"
        for (line, verdict) in [("rules check read /users/ada --as ada --rules rules.json", "\u{1B}[32mallowed\u{1B}[0m: read at /users/ada as uid ada\n"),
                                ("rules check read /users/ada --as bob --rules rules.json", "\u{1B}[31mdenied\u{1B}[0m: read at /users/ada as uid bob: "),
                                ("rules check read /users/ada --as bob --rules rules.json --no-color", "denied: read at /users/ada as uid bob: ")] {
            let (_, text) = try Binary.terminal("cd '\(folder!)' && '\(Binary.path)' --data '\(data)' \(line)", input: "", environment: ["NO_COLOR": nil])
            XCTAssertTrue(text.contains(verdict), "\(line): \(text.debugDescription)")
            XCTAssertEqual(text.contains("\u{1B}["), !line.hasSuffix("--no-color"), "\(line): \(text.debugDescription)")
        }
    }

    /// A server checks for its owner only.
    func testOnAServerOnlyTheOwnerChecks() throws {
        let (server, port) = try Binary.startServer(folder: folder + "/server", arguments: ["--rules", folder + "/rules.json"])
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let user = try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=table", "--no-persistence", "-c", "auth --uid ada", "-c", "rules check read /users/ada --as ada"],
                                  in: folder)
        XCTAssertEqual(user.status, 1)
        XCTAssertEqual(user.stderr, "authenticated as ID token for uid ada (unsigned, from auth --uid)\nerror: -c 2: the server refused: Permission denied: only the owner may check the rules (the rules need the owner's credential: auth with owner, or an access token)\n")
    }

    /// On a folder another rtdb process has open, the check is asked of that process.
    func testAnEmbeddedFolderSharedWithAnotherProcess() throws {
        let data = folder + "/data"
        XCTAssertEqual(try Binary.run(["--data", data], input: Self.seed).status, 0)
        let owner = try Binary.start(["--data", data])
        defer { owner.input.closeFile(); owner.process.waitUntilExit() }
        owner.input.write(Data("watch /users --bg\n".utf8))
        XCTAssertTrue(owner.stdout.waitFor("\"event\":"))
        let result = try Binary.run(["--data", data, "-c", "status --json", "-c", "rules check write /users/bob/age 3 --as bob --rules rules.json"], in: folder)
        XCTAssertTrue(result.stdout.contains("another rtdb process has it open"), result.stdout)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.hasSuffix("allowed: write at /users/bob/age as uid bob\n  /.write: auth != null && auth.token.admin == true → (auth(uid \"bob\") != null) && (null == true) → false\n  /users/$uid/.write at /users/bob: auth != null && auth.uid == $uid → (auth(uid \"bob\") != null) && (\"bob\" == \"bob\") → true\n  /users/$uid/.validate at /users/bob: newData.hasChildren(['name']) → true\n  /users/$uid/age/.validate at /users/bob/age: newData.isNumber() && newData.val() >= 0 → true && (3 >= 0) → true\n"), result.stdout)
    }
}
