import Foundation
import XCTest

/// query and watch from the built binary: exact output, the SDKs' errors, NDJSON until SIGINT.
final class QueryAndWatchTests: XCTestCase {
    var folder: String!

    override func setUpWithError() throws {
        folder = Binary.temporaryFolder()
        let seed = (1...6).map { #"set /notes/n\#($0) {"lastModified": \#($0 * 10), "title": "note \#($0)"}"# }.joined(separator: "\n")
        XCTAssertEqual(try Binary.run(["--data", folder], input: seed).status, 0)
    }

    func rtdb(_ args: [String], input: String? = nil) throws -> Binary.Result {
        try Binary.run(["--data", folder] + args, input: input)
    }

    func testQueryPrintsInQueryOrder() throws {
        let newest = try rtdb(["query", "/notes", "--orderByChild", "lastModified", "--limitToLast", "2"])
        XCTAssertEqual(newest.stdout, #"[{"key":"n5","value":{"lastModified":50,"title":"note 5"}},{"key":"n6","value":{"lastModified":60,"title":"note 6"}}]"# + "\n")
        let range = try rtdb(["query", "/notes", "--orderByChild", "lastModified", "--startAfter", "20", "--endAt", "40"])
        XCTAssertEqual(range.stdout, #"[{"key":"n3","value":{"lastModified":30,"title":"note 3"}},{"key":"n4","value":{"lastModified":40,"title":"note 4"}}]"# + "\n")
        let keys = try rtdb([], input: "query /notes --orderByKey --startAt n5\nquery /notes --orderByValue --equalTo 1\n")
        XCTAssertEqual(keys.stdout, #"[{"key":"n5","value":{"lastModified":50,"title":"note 5"}},{"key":"n6","value":{"lastModified":60,"title":"note 6"}}]"# + "\n[]\n")
    }

    func testInvalidCombinationsUseTheSDKsWords() throws {
        let cases: [([String], String)] = [
            (["--orderByChild", "a", "--orderByKey"], "Query.orderByKey: You can't combine multiple orderBy calls."),
            (["--limitToFirst", "0"], "Query.limitToFirst: First argument must be a positive integer."),
            (["--limitToFirst", "2", "--limitToLast", "2"], "Query.limitToLast: Limit was already set (by another call to limitToFirst, limitToLast or limit)."),
            (["--orderByKey", "--startAt", "a", "b"], "Query: When ordering by key, you may only pass one argument to startAt(), endAt(), or equalTo()."),
            (["--orderByKey", "--equalTo", "5"], "Query: When ordering by key, the argument passed to startAt(), startAfter(), endAt(), endBefore(), or equalTo() must be a string."),
            (["--startAt", "1", "--equalTo", "2"], "Query.equalTo: Starting point was already set (by another call to startAt, startAfter or equalTo)."),
            (["--orderByPriority", "--startAt", "true"], "Query: When ordering by priority, the first argument passed to startAt(), startAfter() endAt(), endBefore(), or equalTo() must be a valid priority value (null, a number, or a string)."),
        ]
        for (flags, message) in cases {
            let result = try rtdb(["query", "/notes"] + flags)
            XCTAssertEqual(result.status, 1, "\(flags)")
            XCTAssertTrue(result.stderr.hasPrefix("error: " + message + "\n"), "\(flags): \(result.stderr)")
        }
    }

    func testWatchJSONStreamsUntilInterrupted() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = ["--data", folder, "watch", "/notes", "--orderByChild", "lastModified", "--limitToLast", "2",
                             "--events", "child_added,child_removed"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let drained = Drain(out.fileHandleForReading)
        XCTAssertTrue(drained.waitFor(#""key":"n6""#))
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let lines = drained.text().split(separator: "\n").map { line -> String in
            // Drop the time, which varies.
            guard let value = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return "bad: \(line)" }
            return "\(value["event"]!) \(value["key"]!) \(value["prev"]!)"
        }
        XCTAssertEqual(lines, ["child_added n5 <null>", "child_added n6 n5"])
    }
}
