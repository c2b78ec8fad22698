import Foundation
import XCTest

/// XCTAssertEqual for a value that had to be awaited (an `await` cannot sit in an assertion's
/// autoclosure).
func assertEqual<T: Equatable>(_ value: T, _ expected: T, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(value, expected, message, file: file, line: line)
}

/// Fails unless `condition` becomes true within `timeout`.
func assertEventually(timeout: TimeInterval = 10, file: StaticString = #filePath, line: UInt = #line, _ condition: () async -> Bool) async {
    let deadline = Date().addingTimeInterval(timeout)
    while await !condition() {
        if Date() >= deadline { return XCTFail("still false after \(timeout) seconds", file: file, line: line) }
        try? await Task.sleep(nanoseconds: 2_000_000)
    }
}
