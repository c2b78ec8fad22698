import XCTest
@testable import rtdb

/// The script runner's read-ahead of standard input, fed by a line source of the test's own.
final class StandardInputLinesTests: XCTestCase {
    /// A read-ahead of two lines, a reader that now runs ahead (and waits for room) and now
    /// falls behind (and finds the runner waiting): every line arrives once, in order, the
    /// last one included, and then the end.
    func testEveryLineArrivesOnceAndInOrderWhateverTheTiming() async {
        let total = 20_000
        var produced = 0
        let lines = StandardInputLines(capacity: 2) {
            guard produced < total else { return nil }
            defer { produced += 1 }
            if produced % 13 == 0 { usleep(50) }  // behind: the runner waits for this line
            return "line \(produced)"
        }
        var received: [String] = []
        while let line = await lines.next() {
            received.append(line)
            if received.count % 101 == 0 { usleep(200) }  // ahead: the reader fills up and waits
        }
        XCTAssertEqual(received.count, total)
        let misplaced = received.indices.first { received[$0] != "line \($0)" }
        XCTAssertNil(misplaced, "position \(misplaced ?? 0) holds \(misplaced.map { received[$0] } ?? "")")
        let afterTheEnd = await lines.next()
        XCTAssertNil(afterTheEnd)
    }

    /// A reader that stays ahead never lets the buffer empty: the lines taken still go, so
    /// a long script is never held whole.
    func testTakenLinesAreLetGoWhileTheReaderStaysAhead() async {
        let total = 3_000
        var produced = 0
        let lines = StandardInputLines(capacity: 4) {
            guard produced < total else { return nil }
            defer { produced += 1 }
            return "line \(produced)"
        }
        var count = 0, mostHeld = 0
        while await lines.next() != nil {
            count += 1
            mostHeld = max(mostHeld, lines.linesHeld)
            usleep(20)  // slower than the reader
        }
        XCTAssertEqual(count, total)
        XCTAssertLessThan(mostHeld, 8)
    }
}
