import Foundation
import XCTest
import RTDBData
@testable import RTDBEngine
import RTDBTestSupport

/// Kills a writer with SIGKILL at random moments and checks that every write it saw
/// acknowledged is there after restart, and that no two-path update is half applied.
final class CrashTests: XCTestCase {
    /// The writer is built beside the test bundle (which is a folder on some platforms).
    var writerPath: String {
        let bundle = Bundle(for: CrashTests.self).bundleURL
        let candidates = [bundle.appendingPathComponent("rtdb-crash-writer"),
                          bundle.deletingLastPathComponent().appendingPathComponent("rtdb-crash-writer")]
        return (candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[1]).path
    }

    func testKillNineLosesNoAcknowledgedWrite() throws {
        let folder = temporaryFolder()
        var rng = SeededRandom.forTest()  // the kills' timing; the seed names the delays, not the scheduling
        var totalAcked = 0
        var roundsWithWrites: [Int] = []
        for round in 0..<6 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: writerPath)
            process.arguments = [folder, String(round)]
            let pipe = Pipe()
            process.standardOutput = pipe
            let collected = Collected()
            pipe.fileHandleForReading.readabilityHandler = { handle in collected.append(handle.availableData) }
            try process.run()
            // Wait for its first acknowledgement (recovery takes a while in debug builds),
            // then let it write for a random while before the kill.
            let started = Date()
            while !collected.text.contains("ack ") && Date().timeIntervalSince(started) < 60 { usleep(5_000) }
            usleep(UInt32.random(in: 1_000...400_000, using: &rng))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            pipe.fileHandleForReading.readabilityHandler = nil
            collected.append(pipe.fileHandleForReading.readDataToEndOfFile())
            let output = collected.text
            let acked = output.split(separator: "\n").filter { $0.hasPrefix("ack ") }.compactMap { Int($0.dropFirst(4)) }

            let database = try Database(folder: folder)
            let data = database.value(at: Path("r\(round)"))
            for n in acked {
                if n % 2 == 0 {
                    XCTAssertEqual(data.child("k\(n)"), Node(Double(n)), "round \(round): acknowledged write \(n) lost")
                } else {
                    XCTAssertEqual(data.child("m\(n)").child("a"), Node(Double(n)), "round \(round): update \(n) lost")
                }
            }
            for (key, child) in data.children where key.name.hasPrefix("m") {
                let a = child.child("a"), c = child.child("b").child("c")
                XCTAssertEqual(a, c, "round \(round): update \(key.name) half applied")
            }
            // Earlier rounds that wrote anything are still there.
            for earlier in roundsWithWrites {
                XCTAssertFalse(database.value(at: Path("r\(earlier)")).isEmpty)
            }
            database.close()
            print("round \(round): \(acked.count) acknowledged")
            if !acked.isEmpty { roundsWithWrites.append(round) }
            totalAcked += acked.count
        }
        XCTAssertGreaterThan(totalAcked, 0, "the writer never got an acknowledgement")
    }
}

/// Output gathered from a child process on another thread.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ more: Data) { lock.lock(); data.append(more); lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return String(decoding: data, as: UTF8.self) }
}
