import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `monitor` as a user runs it: against a server (the owner's, every client's operations,
/// REST's included, with their bytes and verdicts) and on an embedded folder shared by
/// several processes (the others' operations too).
final class MonitorTests: XCTestCase {
    /// A monitor's JSON line without what changes from run to run (times, connection ids,
    /// ports).
    static func fixed(_ line: Substring) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let name = object["name"] as? String else { return nil }
        var text = name + " /" + ((object["path"] as? [String]) ?? []).joined(separator: "/")
        if let set = object["querySet"] as? [[String: Any]], let orderBy = set.first?["orderBy"] as? String { text += " by " + orderBy }
        text += " \(object["bytes"] as? Int ?? -1) B"
        if let allowed = object["allowed"] as? Bool { text += allowed ? " allowed" : " denied" }
        if object["unIndexed"] as? Bool == true { text += " unindexed" }
        if let count = object["clientsUpdated"] as? Int { text += " to \(count)" }
        if let client = object["client"] as? [String: Any] {
            let user = client["owner"] as? Bool == true ? "owner" : (client["user"] as? String) ?? "no-one"
            text += " from " + ((client["id"] as? String) == "rest" ? "rest" : "conn") + " " + user
            let address = client["remoteAddress"] as? String ?? ""
            text += address.hasPrefix("127.0.0.1:") ? " 127.0.0.1" : " " + address
        }
        return text
    }

    /// Writes `/probe` until `monitor` shows it: from then on, it hears everything.
    func waitUntilListening(_ monitor: Binary.Running, _ write: () throws -> Void) throws {
        let deadline = Date().addingTimeInterval(30)
        while !monitor.stdout.current().contains("probe") && Date() < deadline {
            try write()
            usleep(50_000)
        }
        XCTAssertTrue(monitor.stdout.current().contains("probe"), monitor.stderr.current())
    }

    /// A REST PUT of `json` at `path`, waited for.
    func put(_ port: Int, _ path: String, _ json: String) throws {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/\(path).json?ns=demo")!)
        request.httpMethod = "PUT"
        request.httpBody = Data(json.utf8)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { _, _, _ in done.signal() }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
    }

    func testOnAServerEveryClientsOperations() throws {
        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let rules = folder + "/rules.json"
        try #"{"rules": {"pub": {".read": true, ".write": true, ".indexOn": ["n"]}, "probe": {".write": true}, "locked": {".read": false, ".write": false}}}"#
            .write(toFile: rules, atomically: true, encoding: .utf8)
        let (server, port) = try Binary.startServer(folder: folder + "/data", arguments: ["--rules", rules])
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let url = "ws://127.0.0.1:\(port)?ns=demo"

        let refused = try Binary.run(["--url", url, "monitor"], timeout: 30)
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "error: 127.0.0.1 refused the monitor: Permission denied: only the owner may profile the database (auth with owner, or an access token for a hosted database)\n")

        let monitor = try Binary.start(["--url", url, "monitor", "--json"], environment: ["RTDB_AUTH_TOKEN": "owner"])
        // Probes over REST: a write each, no connection of its own, left out below.
        try waitUntilListening(monitor) { try self.put(port, "probe", "1") }
        let start = monitor.stdout.current().count

        // A shell without a credential, and a REST client.
        let shell = try Binary.run(["--url", url, "--keep-going"], input: """
            watch /pub --bg
            set /pub/a {"n": 1}
            update /pub {"b/n": 2}
            get /pub
            query /pub --orderByChild m --limitToFirst 5
            set /locked/x 1
            unwatch all

            """)
        XCTAssertEqual(shell.status, 1, shell.stderr)
        try put(port, "pub/c", #"{"n":3}"#)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: URL(string: "http://127.0.0.1:\(port)/pub.json?ns=demo&orderBy=%22n%22")!) { _, _, _ in done.signal() }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        // The shell's end and the REST read, which may come in either order.
        let deadline = Date().addingTimeInterval(15)
        while !(monitor.stdout.current().dropFirst(start).contains("rest-read") && monitor.stdout.current().dropFirst(start).contains("concurrent-disconnect"))
                && Date() < deadline { usleep(20_000) }
        monitor.interrupt()
        XCTAssertEqual(monitor.process.terminationStatus, 0, monitor.stderr.text())

        let lines = monitor.stdout.text().dropFirst(start).split(separator: "\n").compactMap(Self.fixed).filter { !$0.contains(" /probe ") }
        // Writes are told once durable, after reads that followed them: compared in order of name.
        XCTAssertEqual(lines.sorted(), [
            "concurrent-connect / 0 B from conn no-one 127.0.0.1",
            "concurrent-disconnect / 0 B from conn no-one 127.0.0.1",
            "listener-broadcast /pub/a 7 B to 1",
            "listener-broadcast /pub/b/n 1 B to 1",
            "listener-listen /pub 4 B allowed from conn no-one 127.0.0.1",
            "listener-unlisten /pub 0 B from conn no-one 127.0.0.1",
            "realtime-read /pub 25 B allowed from conn no-one 127.0.0.1",
            "realtime-read /pub by m 25 B allowed unindexed from conn no-one 127.0.0.1",
            "realtime-update /pub 13 B allowed from conn no-one 127.0.0.1",
            "realtime-write /locked/x 1 B denied from conn no-one 127.0.0.1",
            "realtime-write /pub/a 7 B allowed from conn no-one 127.0.0.1",
            "rest-read /pub by n 37 B allowed from rest no-one 127.0.0.1",
            "rest-write /pub/c 7 B allowed from rest no-one 127.0.0.1",
        ].sorted(), lines.joined(separator: "\n"))
    }

    /// On an embedded folder, the owner's monitor shows what another process does through
    /// its socket; a monitor in that other process reads the owner's stream.
    func testOnASharedFolderTheOtherProcessesToo() throws {
        let folder = Binary.temporaryFolder()
        let owner = try Binary.start(["--data", folder])
        owner.input.write(Data("monitor --bg\nset /n 1\n".utf8))
        XCTAssertTrue(owner.stdout.waitFor(#""name":"realtime-write","path":["n"]"#), owner.stdout.current() + owner.stderr.current())
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: folder + "/socket") && Date() < deadline { usleep(20_000) }

        let other = try Binary.start(["--data", folder, "monitor", "/shared"])
        try waitUntilListening(other) { _ = try Binary.run(["--data", folder, "-c", "set /shared/probe 1"]) }
        XCTAssertEqual(try Binary.run(["--data", folder, "-c", #"set /shared/x {"a": true}"#]).status, 0)
        XCTAssertTrue(owner.stdout.waitFor(#""path":["shared","x"],"millis""#), owner.stdout.current())
        XCTAssertTrue(other.stdout.waitFor(#""path":["shared","x"],"millis""#), other.stdout.current())
        other.interrupt()
        XCTAssertEqual(other.process.terminationStatus, 0, other.stderr.text())
        // Only /shared: not the owner's /n, nor the connections (they have no path).
        let shown = other.stdout.text().split(separator: "\n").compactMap(Self.fixed)
        XCTAssertEqual(Set(shown.map { String($0.prefix { $0 != " " }) }), ["realtime-write"], shown.joined(separator: "\n"))
        XCTAssertTrue(shown.contains("realtime-write /shared/x 10 B allowed from conn owner unix"), shown.joined(separator: "\n"))

        try owner.input.close()
        owner.process.waitUntilExit()
        XCTAssertEqual(owner.process.terminationStatus, 0, owner.stderr.text())
    }
    /// `profile` captures a known sequence raw to a file, and reports on the file later,
    /// without a database: the tables have those operations, the users' paths collapsed.
    func testProfileCapturesRawAndReportsFromTheFile() throws {
        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let (server, port) = try Binary.startServer(folder: folder + "/data")
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let url = "ws://127.0.0.1:\(port)?ns=demo"
        let file = folder + "/capture.ndjson"
        let capture = try Binary.start(["--url", url, "profile", "--raw", "-o", file], environment: ["RTDB_AUTH_TOKEN": "owner"])
        XCTAssertTrue(capture.stderr.waitFor("profiling until Ctrl-C...\n"), capture.stderr.current())
        let script = (0..<30).map { #"set /users/u\#($0) {"n": \#($0)}"# }.joined(separator: "\n") + "\nget /users\n"
        XCTAssertEqual(try Binary.run(["--url", url], input: script).status, 0)
        // Each write was told to the monitors before it was acknowledged: what is left is a
        // batch's gathering (10 ms) and its way here.
        usleep(1_000_000)
        capture.interrupt()
        XCTAssertEqual(capture.process.terminationStatus, 0)
        let said = capture.stderr.text()
        // The writer's connection, 30 writes, a read, and its end.
        XCTAssertTrue(said.hasSuffix("33 operations recorded\nwrote 33 operations to \(file)\n"), said)
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 33, lines.joined(separator: "\n"))
        XCTAssertEqual(lines.compactMap(Self.fixed).filter { $0.hasPrefix("realtime-write") }.count, 30)

        let report = try Binary.run(["--data", folder + "/embedded", "profile", "--input", file])
        XCTAssertEqual(report.status, 0, report.stderr)
        let text = report.stdout.replacingOccurrences(of: #"[\d,]+(\.\d+)? ms"#, with: "T ms", options: .regularExpression)
        XCTAssertTrue(text.contains("""
            Write Speed
            Path              Count  Average Execution Speed  Average Pending Time  Permission Denied
            ----------------  -----  -----------------------  --------------------  -----------------
            /users/$wildcard  30     T ms
            """), text)
        XCTAssertTrue(text.contains("""
            Uploaded Bytes
            Path              Total  Count  Average
            ----------------  -----  -----  -------
            /users/$wildcard  230 B  30     7.67 B
            """), text)
        XCTAssertTrue(text.contains("Connect Speed\nCount  Average Execution Speed  Average Pending Time\n-----  -----------------------  --------------------\n1 "), text)
        let empty = try Binary.run(["--data", folder + "/embedded", "profile", "--input", rulesFile(in: folder)])
        XCTAssertEqual(empty.status, 1)
        XCTAssertEqual(empty.stderr, "error: \(folder)/rules.json holds no operations (1 line is not one): profile --raw -o FILE writes a capture to report on\n")
    }

    /// A watched or read query ordered by a child the rules give no `.indexOn`: the shell
    /// says the server's `no_index` warning, with the rule to add and where, as the official
    /// clients do for a listen; an indexed one, or one with no limit or range, nothing.
    func testAnUnindexedQueryIsWarnedOf() throws {
        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{"rules": {".read": true, ".write": true, "users": {".indexOn": ["age"]}}}"#.write(toFile: folder + "/rules.json", atomically: true, encoding: .utf8)
        let (server, port) = try Binary.startServer(folder: folder + "/data", arguments: ["--rules", folder + "/rules.json"])
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let result = try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=demo"], input: """
            watch /users --orderByChild name --limitToFirst 10 --bg
            watch /users --orderByChild age --limitToFirst 10 --bg
            unwatch all
            get /users --orderByChild score --limitToLast 3
            query /users --orderByChild age --limitToLast 3
            query /users --orderByChild score

            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, """
            warning: Using an unspecified index. Consider adding ".indexOn": "name" at /users to your security rules for better performance.
            warning: Using an unspecified index. Consider adding ".indexOn": "score" at /users to your security rules for better performance.

            """)
        XCTAssertTrue(result.stdout.hasSuffix("}\nnull\n[]\n[]\n"), result.stdout)
    }

    func rulesFile(in folder: String) throws -> String {
        try #"{"rules": {}}"#.write(toFile: folder + "/rules.json", atomically: true, encoding: .utf8)
        return folder + "/rules.json"
    }
}
