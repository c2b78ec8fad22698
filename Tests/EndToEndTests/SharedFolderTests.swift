import Foundation
import XCTest

/// Several rtdb processes on one embedded data folder: the owner serves the others on its
/// socket; when it exits or is killed, another takes the folder over, and no write is lost.
final class SharedFolderTests: XCTestCase {
    var folder: String!

    override func setUp() { folder = Binary.temporaryFolder() }

    /// A script-reading rtdb on the folder, started once the previous owner (if any) is known.
    func start() throws -> Binary.Running {
        try Binary.start(["--data", folder])
    }

    /// Waits until the folder's LOCK names `process`.
    func waitUntilOwner(_ process: Binary.Running, timeout: TimeInterval = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let owner = (try? String(contentsOfFile: folder + "/LOCK", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            if owner == String(process.process.processIdentifier) { return true }
            usleep(20_000)
        }
        return false
    }

    func rtdb(_ arguments: [String], input: String? = nil) throws -> Binary.Result {
        try Binary.run(["--data", folder] + arguments, input: input)
    }

    func testAWatchInOneProcessSeesAnothersWritesAndTheOtherTakesOver() throws {
        let owner = try start()
        XCTAssertTrue(waitUntilOwner(owner))
        owner.input.write(Data("watch /notes --bg\n".utf8))
        XCTAssertTrue(owner.stdout.waitFor(#"{"watch":1}"#))

        // One-shot commands while the owner has the folder go through its socket.
        XCTAssertEqual(try rtdb(["set", "/notes/a", "1"]).status, 0)
        XCTAssertTrue(owner.stdout.waitFor(#""event":"child_added","path":"/notes","key":"a""#), owner.stdout.current())
        let read = try rtdb(["get", "/notes"])
        XCTAssertEqual(read.stdout, #"{"a":1}"# + "\n", read.stderr)

        // A second long-lived process; the owner leaves; the second owns the folder and goes on.
        let second = try start()
        second.input.write(Data("set /notes/b 2\nget /notes\n".utf8))
        XCTAssertTrue(second.stdout.waitFor(#"{"a":1,"b":2}"#), second.stderr.current() + second.stdout.current())
        try owner.input.close()
        owner.process.waitUntilExit()
        XCTAssertEqual(owner.process.terminationStatus, 0, owner.stderr.text())
        XCTAssertTrue(waitUntilOwner(second))
        second.input.write(Data("set /notes/c 3\n".utf8))
        let third = try rtdb(["get", "/notes"])
        XCTAssertEqual(third.stdout, #"{"a":1,"b":2,"c":3}"# + "\n", third.stderr)
        try second.input.close()
        second.process.waitUntilExit()
        XCTAssertEqual(second.process.terminationStatus, 0, second.stderr.text())
        XCTAssertEqual(second.stderr.text(), "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/socket"))
    }

    func testKillingTheOwnerInTheMiddleOfAnothersWritesLosesNone() throws {
        let owner = try start()
        XCTAssertTrue(waitUntilOwner(owner))
        let writer = try start()
        let lines = (0..<3000).map { "set /k/\($0) \($0)\n" }
        for line in lines.prefix(1500) { writer.input.write(Data(line.utf8)) }
        // Some of them through the owner's socket, then the owner dies without a word.
        XCTAssertTrue(waitForCount(atLeast: 100))
        kill(owner.process.processIdentifier, SIGKILL)
        owner.process.waitUntilExit()
        for line in lines.dropFirst(1500) { writer.input.write(Data(line.utf8)) }
        writer.input.write(Data("get /k --shallow --json\n".utf8))
        try writer.input.close()
        writer.process.waitUntilExit()
        XCTAssertEqual(writer.process.terminationStatus, 0, writer.stderr.text())
        let after = try rtdb(["ls", "/k", "--json"])
        let keys = try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String]
        XCTAssertEqual(keys?.count, 3000, after.stderr)
        let values = try JSONSerialization.jsonObject(with: Data(try rtdb(["get", "/k"]).stdout.utf8)) as? [Any]
        XCTAssertEqual(values?.count, 3000)
    }

    /// Polls through a one-shot process until /k has `count` children.
    func waitForCount(atLeast count: Int, timeout: TimeInterval = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let result = try? rtdb(["ls", "/k", "--json"]),
               let keys = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String], keys.count >= count {
                return true
            }
            usleep(50_000)
        }
        return false
    }
}
