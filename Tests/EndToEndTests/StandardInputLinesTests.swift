import XCTest
import RTDBShell
@testable import rtdb

/// The script runner's read-ahead of standard input, fed by a line source of the test's own.
final class StandardInputLinesTests: XCTestCase {
    /// A read-ahead of two lines, a reader that now runs ahead (and waits for room) and now
    /// falls behind (and finds the runner waiting): every line arrives once, in order, the
    /// last one included, and then the end.
    func testEveryLineArrivesOnceAndInOrderWhateverTheTiming() async throws {
        let total = 20_000
        // Every 13th line late: the runner waits for it.
        let lines = numbered(total, capacity: 2) { if $0 % 13 == 0 { usleep(50) } }
        var received: [String] = []
        while let line = try await lines.next() {
            received.append(line)
            if received.count % 101 == 0 { usleep(200) }  // ahead: the reader fills up and waits
        }
        XCTAssertEqual(received.count, total)
        let misplaced = received.indices.first { received[$0] != "line \($0)" }
        XCTAssertNil(misplaced, "position \(misplaced ?? 0) holds \(misplaced.map { received[$0] } ?? "")")
        let afterTheEnd = try await lines.next()
        XCTAssertNil(afterTheEnd)
    }

    /// A reader that stays ahead never lets the buffer empty: the lines taken still go, so
    /// a long script is never held whole.
    func testTakenLinesAreLetGoWhileTheReaderStaysAhead() async throws {
        let total = 3_000
        let lines = numbered(total, capacity: 4)
        var count = 0, mostHeld = 0
        while try await lines.next() != nil {
            count += 1
            mostHeld = max(mostHeld, lines.linesHeld)
            usleep(20)  // slower than the reader
        }
        XCTAssertEqual(count, total)
        XCTAssertLessThan(mostHeld, 8)
    }

    /// Lines are split on `\n` (and `\r\n`), the last without one included; a line over the
    /// limit is measured, not kept, and the lines after it read as before.
    func testLinesAreSplitAndALineOverTheLimitIsOnlyMeasured() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let atTheLimit = String(repeating: "y", count: 70_000)
        let input = "a\r\n\nb c\n" + String(repeating: "x", count: 100_000) + "\n" + atTheLimit + "\r\n" + atTheLimit + "y\nlast"
        let writeEnd = fds[1]
        let writer = Thread {
            _ = input.utf8CString.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count - 1) }
            close(writeEnd)
        }
        writer.start()
        let reader = InputLineReader(fd: fds[0], limit: 70_000)
        var lines: [Result<String, ScriptLineTooLong>] = []
        while let line = reader.next() { lines.append(line) }
        close(fds[0])
        XCTAssertEqual(lines, [.success("a"), .success(""), .success("b c"), .failure(ScriptLineTooLong(bytes: 100_000)),
                               .success(atTheLimit), .failure(ScriptLineTooLong(bytes: 70_001)), .success("last")])
    }

    /// `total` lines, "line 0" first, read ahead `capacity` at a time; `before(n)` runs as
    /// line n is read.
    private func numbered(_ total: Int, capacity: Int, before: @escaping @Sendable (Int) -> Void = { _ in }) -> StandardInputLines {
        var produced = 0
        return StandardInputLines(capacity: capacity) {
            guard produced < total else { return nil }
            defer { produced += 1 }
            before(produced)
            return .success("line \(produced)")
        }
    }
}
