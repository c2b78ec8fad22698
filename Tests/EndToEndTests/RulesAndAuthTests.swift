import Foundation
import XCTest

/// Security rules and credentials as a shell user meets them: `rtdb serve --rules`, `auth`,
/// `logout`, `rules get|set`, refused writes and a watch the rules stop.
final class RulesAndAuthTests: XCTestCase {
    private var folder: String!
    private var server: Process!
    private var port = 0
    private var log: Drain!

    private let rules = """
        {
          // Each user owns their notes; a note has a text.
          "rules": {
            "notes": {
              "$uid": {
                ".read": "auth != null && auth.uid == $uid",
                ".write": "auth != null && auth.uid == $uid",
                "$note": { ".validate": "newData.hasChildren(['text'])" }
              }
            },
            "admin": { ".read": "auth.token.admin === true" }
          }
        }

        """

    override func setUpWithError() throws {
        folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try rules.write(toFile: folder + "/rules.json", atomically: true, encoding: .utf8)
        (server, port, log) = try Binary.startLoggingServer(folder: folder + "/data", arguments: ["--rules", folder + "/rules.json"])
    }

    override func tearDown() {
        if let server, server.isRunning {
            kill(server.processIdentifier, SIGTERM)
            server.waitUntilExit()
        }
    }

    private func shell(_ script: String) throws -> Binary.Result {
        try Binary.run(["--keep-going", "--no-persistence", "--url", "ws://127.0.0.1:\(port)?ns=demo"], input: script, in: folder)
    }

    func testWritesReadsAndStatusFollowWhoYouAre() throws {
        let result = try shell("""
            set /notes/ada/n1 {"text": "hi"}
            auth --uid ada
            set /notes/ada/n1 {"text": "hi"}
            set /notes/ada/n2 {"title": "no text"}
            set /notes/bob/n1 {"text": "not mine"}
            get /notes/ada
            get /notes/bob
            status --json
            logout
            get /notes/ada
            auth --uid root --claims {"admin":true}
            get /admin
            """)
        XCTAssertEqual(result.stdout, """
            {"n1":{"text":"hi"}}
            {"location":"ws://127.0.0.1:\(port)/.ws?ns=demo","online":true,"offlineByChoice":false,"serverTimeOffset":0,"credential":"ID token for uid ada (unsigned, from auth --uid)","pendingWrites":0,"pendingTransactions":0,"backgroundWatches":[],"keptSynced":[],"onDisconnectWrites":0,"cache":null}
            null

            """)
        // A script's writes are pipelined: a refusal is reported after the line that follows.
        // Each says which rule decided and what its parts were worth.
        XCTAssertEqual(result.stderr, """
            authenticated as ID token for uid ada (unsigned, from auth --uid)
            error: line 1: write rejected: PERMISSION_DENIED at /notes/ada/n1: Permission denied: no .write rule allows this write: /notes/$uid/.write at /notes/ada: auth != null && auth.uid == $uid → (null != null) && auth.uid == $uid → false
            error: line 4: write rejected: PERMISSION_DENIED at /notes/ada/n2: Permission denied: the .validate rule at /notes/ada/n2 refuses the new data: /notes/$uid/$note/.validate at /notes/ada/n2: newData.hasChildren(['text']) → false
            error: line 5: write rejected: PERMISSION_DENIED at /notes/bob/n1: Permission denied: no .write rule allows this write: /notes/$uid/.write at /notes/bob: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "bob") → false
            error: line 7: PERMISSION_DENIED: Permission denied: no .read rule allows this read: /notes/$uid/.read at /notes/bob: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "bob") → false
            logged out: the server sees no credential
            error: line 10: PERMISSION_DENIED: Permission denied: no .read rule allows this read: /notes/$uid/.read at /notes/ada: auth != null && auth.uid == $uid → (null != null) && auth.uid == $uid → false
            authenticated as ID token for uid root (unsigned, from auth --uid)

            """)
        XCTAssertEqual(result.status, 1)
        // The token is in no log.
        XCTAssertFalse(log.current().contains("eyJ"))
    }

    func testTheOwnerReplacesTheRulesAndAWatchSaysWhyItStopped() throws {
        try "owner\n".write(toFile: folder + "/owner.txt", atomically: true, encoding: .utf8)
        let watcher = try Binary.start(["--url", "ws://127.0.0.1:\(port)?ns=demo", "-c", "auth --uid ada", "-c", "watch /notes/ada --events value"], in: folder)
        XCTAssertTrue(watcher.stdout.waitFor(#""event":"value","path":"/notes/ada","key":null,"prev":null,"data":null}"#), watcher.stderr.text())
        try #"{"rules": {"notes": {".write": true}}}"#.write(toFile: folder + "/closed.json", atomically: true, encoding: .utf8)
        try "{\n  \"rules\": {\n    \".read\": \"auth.uid ==\"\n  }\n}\n".write(toFile: folder + "/broken.json", atomically: true, encoding: .utf8)
        let owner = try shell("""
            rules get
            rules set broken.json
            auth owner.txt
            rules get
            rules set broken.json
            rules set closed.json
            rules get
            """)
        XCTAssertEqual(owner.stdout, rules + #"{"rules": {"notes": {".write": true}}}"# + "\n")
        XCTAssertEqual(owner.stderr, """
            error: line 1: the server refused: Permission denied: only the owner may read or change the rules (the rules need the owner's credential: auth with owner, or an access token)
            error: line 2: broken.json:3:26: in .read: expected a value, found the end of the expression; the rules were not changed
            authenticated as owner (from owner.txt)
            error: line 5: broken.json:3:26: in .read: expected a value, found the end of the expression; the rules were not changed
            the rules of ws://127.0.0.1:\(port)/.ws?ns=demo are replaced

            """)
        // The watch ends: the new rules do not let ada read her notes.
        watcher.process.waitUntilExit()
        XCTAssertEqual(watcher.process.terminationStatus, 1)
        XCTAssertEqual(watcher.stderr.text(), """
            authenticated as ID token for uid ada (unsigned, from auth --uid)
            error: -c 2: the watch was cancelled: PERMISSION_DENIED at /notes/ada: Client doesn't have permission to access the desired data.

            """)
    }

    /// `--log-rules`: every decision on a request that is not the owner's, one line each, with
    /// the rules that decided and what their parts were worth.
    func testTheServerLogsEveryDecisionOfTheRules() throws {
        let (logging, loggingPort, serverLog) = try Binary.startLoggingServer(folder: folder + "/logged", arguments: ["--rules", folder + "/rules.json", "--log-rules"])
        defer { kill(logging.processIdentifier, SIGTERM); logging.waitUntilExit() }
        try "owner\n".write(toFile: folder + "/owner.txt", atomically: true, encoding: .utf8)
        let result = try Binary.run(["--keep-going", "--no-persistence", "--url", "ws://127.0.0.1:\(loggingPort)?ns=demo"], input: """
            auth --uid ada
            set /notes/ada/n1 {"text": "hi"}
            get /notes/bob
            auth owner.txt
            get /notes/bob

            """, in: folder)
        XCTAssertEqual(result.status, 1, result.stderr)
        let decisions = serverLog.current().split(separator: "\n").compactMap { line in
            line.range(of: "rules: ").map { String(line[$0.lowerBound...]) }
        }
        XCTAssertEqual(decisions, [
            #"rules: allowed write at /notes/ada/n1 as uid ada: /notes/$uid/.write at /notes/ada: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "ada") → true; /notes/$uid/$note/.validate at /notes/ada/n1: newData.hasChildren(['text']) → true"#,
            #"rules: denied read of /notes/bob as uid ada: /notes/$uid/.read at /notes/bob: auth != null && auth.uid == $uid → (auth(uid "ada") != null) && ("ada" == "bob") → false"#,
        ])
    }

    func testAuthRefusesWhatCannotWork() throws {
        try "not a token at all\n".write(toFile: folder + "/spaces.txt", atomically: true, encoding: .utf8)
        try "garbage\n".write(toFile: folder + "/garbage.txt", atomically: true, encoding: .utf8)
        let remote = try shell("auth spaces.txt\nauth garbage.txt\nauth missing.txt\nauth --uid\nauth --claims {}\nauth --uid ada --claims [1]\nauth -\n")
        XCTAssertEqual(remote.stderr, """
            error: line 1: spaces.txt does not hold a token (one word, at most 64 KB)
            error: line 2: the server refused the credential: INVALID_TOKEN: the credential is neither "owner" nor a JSON Web Token
            error: line 3: cannot read missing.txt: no such file
            error: line 4, column 6: --uid needs a value (UID)
              auth --uid
                   ^
            error: line 5, column 15: --claims goes with --uid
              auth --claims {}
                            ^
            error: line 6, column 25: --claims needs a JSON object, as in --claims '{"admin": true}'
              auth --uid ada --claims [1]
                                      ^
            error: line 7: auth - reads the token from standard input, which carries this session's commands; give a file name, or run rtdb -c 'auth -' < FILE

            """)
        // With -c, standard input is free to carry the token.
        let piped = try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=demo", "-c", "auth -", "-c", "rules get"], input: "owner\n", in: folder)
        XCTAssertEqual(piped.stdout, rules)
        XCTAssertEqual(piped.stderr, "authenticated as owner (from standard input)\n")
        let embedded = try Binary.run(["--data", folder + "/embedded", "-c", "auth --uid ada", "-c", "rules get"], in: folder)
        XCTAssertEqual(embedded.stderr, """
            error: -c 1: an embedded database has no security rules, so no credential: auth is for rtdb serve and hosted databases (--url)

            """)
    }
}

/// The README's rules example, run as printed: its rules file, script, output and messages.
final class RulesReadmeTests: XCTestCase {
    func testTheReadmeExample() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let section = try XCTUnwrap(text.range(of: "**Trying rules from the shell.**"))
        var blocks: [String] = []
        var rest = text[section.upperBound...]
        while blocks.count < 5, let open = rest.range(of: "\n```"), let lineEnd = rest[open.upperBound...].firstIndex(of: "\n"),
              let close = rest.range(of: "\n```", range: lineEnd..<rest.endIndex) {
            blocks.append(String(rest[rest.index(after: lineEnd)..<close.lowerBound]) + "\n")
            rest = rest[close.upperBound...]
        }
        XCTAssertEqual(blocks.count, 5)
        let stdout = try XCTUnwrap(text.range(of: "prints\n`")).upperBound
        let printed = String(text[stdout...].prefix { $0 != "`" })

        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try blocks[0].write(toFile: folder + "/rules.json", atomically: true, encoding: .utf8)
        let (server, port) = try Binary.startServer(folder: folder + "/data", arguments: ["--rules", folder + "/rules.json"])
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let result = try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=demo", "--keep-going"], input: blocks[1], in: folder)
        XCTAssertEqual(result.stdout, printed + "\n")
        XCTAssertEqual(result.stderr, blocks[2])
        XCTAssertEqual(result.status, 1)

        // rules check, on an embedded database with the same rules.
        let checked = try Binary.run(["--data", folder + "/embedded", "--keep-going"], input: blocks[3], in: folder)
        XCTAssertEqual(checked.stdout, blocks[4])
        XCTAssertEqual(checked.stderr, "")
        XCTAssertEqual(checked.status, 1)
    }
}
