import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `get --explain` and `query --explain` as a user runs them: on an embedded database (in
/// this process and through the owner's socket) and on a server with rules, where the answer
/// names the `.indexOn` to add and where; and the REST form they use.
final class ExplainTests: XCTestCase {
    /// The time on the server changes from run to run.
    static func fixed(_ text: String) -> String {
        text.replacingOccurrences(of: #"[\d,]+ µs"#, with: "T µs", options: .regularExpression)
            .replacingOccurrences(of: #""micros":\d+"#, with: #""micros":0"#, options: .regularExpression)
    }

    static let users = #"set /users {"ada": {"age": 36, "name": "Ada"}, "bob": {"age": 25, "name": "Bob"}, "cy": {"age": 41, "name": "Cy"}}"#

    func testEmbeddedSaysWhichIndexAnsweredAndWhatItRead() throws {
        let folder = Binary.temporaryFolder()
        let script = """
            \(Self.users)
            get /users --orderByChild age --limitToFirst 2 --explain
            query /users --orderByChild age --startAt 30 --explain
            get /users --orderByKey --limitToLast 1 --explain
            get /users --explain
            query /users --orderByChild name --explain
            get /users --orderByValue --equalTo 3 --explain --json

            """
        let result = try Binary.run(["--data", folder], input: script)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(Self.fixed(result.stdout), """
            index     age: built for this read, by ordering the location's 3 children (kept for the next ones)
            read      5 children: 3 to build the index, 2 answered
            answer    2 of 3 children
            time      T µs on the server
            .indexOn  missing: add ".indexOn": "age" at /users in the rules
            index     age: kept from an earlier read
            read      2 children
            answer    2 of 3 children
            time      T µs on the server
            .indexOn  missing: add ".indexOn": "age" at /users in the rules
            index   none needed: key order is the children's own
            read    1 child
            answer  1 of 3 children
            time    T µs on the server
            index   none: no query, the whole location is read
            read    3 children
            answer  3 of 3 children
            time    T µs on the server
            index   none: ordered by name with no limit or range, the whole location is read and the client orders it
            read    3 children
            answer  3 of 3 children
            time    T µs on the server
            {"path":"/users","rules":"/users","index":".value","use":"built","declared":false,"unindexed":false,"children":3,"ordered":3,"returned":0,"micros":0,"listens":0,"indexOn":[".value"]}

            """, result.stdout)
    }

    func testMistakesAreSaidWithTheirColumn() throws {
        let folder = Binary.temporaryFolder()
        let cases: [(String, String)] = [
            ("get /users --explain --shallow", """
                error: -c 1, column 22: --shallow does not go with --explain
                  get /users --explain --shallow
                                       ^

                """),
            ("query /users --orderByKey --watch --explain", """
                error: -c 1, column 27: --watch does not go with --explain
                  query /users --orderByKey --watch --explain
                                            ^

                """),
        ]
        for (command, expected) in cases {
            let result = try Binary.run(["--data", folder, "-c", command])
            XCTAssertEqual(result.status, 1, command)
            XCTAssertEqual(result.stderr, expected, command)
        }
    }

    /// A second process on the folder asks the owner, on its socket, and sees the index the
    /// owner's own query built.
    func testASecondProcessAsksTheOwner() throws {
        let folder = Binary.temporaryFolder()
        let owner = try Binary.start(["--data", folder])
        owner.input.write(Data("\(Self.users)\nquery /users --orderByChild age --limitToLast 1\n".utf8))
        XCTAssertTrue(owner.stdout.waitFor("Cy"), owner.stderr.current())
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: folder + "/socket") && Date() < deadline { usleep(20_000) }
        let asked = try Binary.run(["--data", folder, "-c", "status", "-c", "query /users --orderByChild age --limitToLast 2 --explain"])
        XCTAssertEqual(asked.status, 0, asked.stderr)
        XCTAssertTrue(asked.stdout.contains("another rtdb process has it open"), asked.stdout)
        XCTAssertTrue(Self.fixed(asked.stdout).hasSuffix("""
            index     age: kept from an earlier read
            read      2 children
            answer    2 of 3 children
            time      T µs on the server
            .indexOn  missing: add ".indexOn": "age" at /users in the rules

            """), asked.stdout)
        try owner.input.close()
        owner.process.waitUntilExit()
        XCTAssertEqual(owner.process.terminationStatus, 0, owner.stderr.text())
    }

    /// On a server the rules decide as for a read, and the answer names the rules location
    /// of the `.indexOn` to add (through a wildcard), with what is declared there already.
    func testOnAServerTheRulesLocationOfTheMissingIndexOn() throws {
        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let rules = folder + "/rules.json"
        try #"""
            {"rules": {"users": {".read": true, ".write": true, ".indexOn": ["name"]},
                       "rooms": {"$room": {"messages": {".read": true, ".write": true}}},
                       "locked": {".read": false}}}
            """#.write(toFile: rules, atomically: true, encoding: .utf8)
        let (server, port) = try Binary.startServer(folder: folder + "/data", arguments: ["--rules", rules])
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let url = "ws://127.0.0.1:\(port)?ns=demo"
        let result = try Binary.run(["--url", url, "--keep-going"], input: """
            \(Self.users)
            query /users --orderByChild age --limitToFirst 1 --explain
            query /users --orderByChild name --limitToFirst 1 --explain
            query /rooms/lobby/messages --orderByChild sent --limitToLast 20 --explain
            get /locked --orderByChild x --limitToFirst 1 --explain

            """)
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(Self.fixed(result.stdout), """
            index     age: built for this read, by ordering the location's 3 children (kept for the next ones)
            read      4 children: 3 to build the index, 1 answered
            answer    1 of 3 children
            time      T µs on the server
            .indexOn  missing: at /users in the rules, ".indexOn": "name" becomes ".indexOn": ["name", "age"]; until then the server warns of this query (no_index)
            index     name: built for this read, by ordering the location's 3 children (kept for the next ones)
            read      4 children: 3 to build the index, 1 answered
            answer    1 of 3 children
            time      T µs on the server
            .indexOn  declared at /users in the rules
            index     sent: built for this read, the location has no children to order (kept for the next ones)
            read      0 children
            answer    0 of 0 children
            time      T µs on the server
            .indexOn  missing: add ".indexOn": "sent" at /rooms/$room/messages in the rules; until then the server warns of this query (no_index)

            """, result.stdout)
        XCTAssertEqual(result.stderr, "error: line 5: 127.0.0.1 refused: Permission denied: no .read rule allows this read: /locked/.read: false → false\n")

        // The REST form the shell uses, as curl would send it.
        let target = "http://127.0.0.1:\(port)/users.json?ns=demo&orderBy=%22age%22&limitToLast=2&explain=true"
        let (status, body) = try get(target)
        XCTAssertEqual(status, 200)
        XCTAssertEqual(Self.fixed(body), #"{"path":"/users","rules":"/users","index":"age","use":"kept","declared":false,"unindexed":true,"children":3,"ordered":0,"returned":2,"micros":0,"listens":0,"indexOn":["name","age"]}"#)
        let (badStatus, badBody) = try get("http://127.0.0.1:\(port)/users.json?ns=demo&explain=yes")
        XCTAssertEqual(badStatus, 400)
        XCTAssertEqual(badBody, #"{"error":"explain must be true or false, not \"yes\""}"#)
        let (streamStatus, streamBody) = try get("http://127.0.0.1:\(port)/users.json?ns=demo&explain=true", accept: "text/event-stream")
        XCTAssertEqual(streamStatus, 400)
        XCTAssertEqual(streamBody, #"{"error":"explain=true describes one read: it does not go with an event stream"}"#)

        // A namespace that does not exist is explained as the nothing it holds, and made by
        // no one; its rules decide all the same.
        let (ghostStatus, ghostBody) = try get("http://127.0.0.1:\(port)/rooms/r/messages.json?ns=ghost&orderBy=%22sent%22&limitToLast=5&explain=true")
        XCTAssertEqual(ghostStatus, 200)
        XCTAssertEqual(ghostBody, #"{"path":"/rooms/r/messages","rules":"/rooms/$room/messages","index":"sent","use":"built","declared":false,"unindexed":true,"children":0,"ordered":0,"returned":0,"micros":0,"listens":0,"indexOn":["sent"]}"#)
        XCTAssertEqual(try get("http://127.0.0.1:\(port)/locked.json?ns=ghost&explain=true").0, 401)
        XCTAssertEqual(try get("http://127.0.0.1:\(port)/.inspect/databases.json").1, #"[{"name":"demo"}]"#)
    }

    /// The README's example, typed as printed against a server with the rules it names.
    func testTheReadmeExampleRunsAsPrinted() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let heading = try XCTUnwrap(text.range(of: "**Explaining a read.**"))
        let start = try XCTUnwrap(text.range(of: "```text\n", range: heading.upperBound..<text.endIndex))
        let end = try XCTUnwrap(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        var commands: [String] = [], expected = ""
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            if line.hasPrefix("rtdb> ") { commands.append(String(line.dropFirst(6))) } else { expected += line + "\n" }
        }
        XCTAssertEqual(commands.count, 3)

        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{"rules": {".read": true, ".write": true}}"#.write(toFile: folder + "/rules.json", atomically: true, encoding: .utf8)
        let (server, port) = try Binary.startServer(folder: folder + "/data", arguments: ["--rules", folder + "/rules.json"])
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let result = try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=readme"], input: commands.joined(separator: "\n") + "\n")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(Self.fixed(result.stdout), Self.fixed(expected))
    }

    /// A GET, waited for: its status and body.
    func get(_ url: String, accept: String? = nil) throws -> (Int, String) {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var answer: (Int, String) = (0, "")
        var request = URLRequest(url: URL(string: url)!)
        if let accept { request.setValue(accept, forHTTPHeaderField: "Accept") }
        URLSession.shared.dataTask(with: request) { data, response, _ in
            answer = ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data ?? Data(), as: UTF8.self))
            done.signal()
        }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        return answer
    }
}
