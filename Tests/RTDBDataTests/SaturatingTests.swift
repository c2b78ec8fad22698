import XCTest
import RTDBData

/// Counts that only grow stop at the largest Int rather than trap.
final class SaturatingTests: XCTestCase {
    func testAddingSaturated() {
        XCTAssertEqual(2.addingSaturated(3), 5)
        XCTAssertEqual(Int.max.addingSaturated(1), .max)
        XCTAssertEqual((Int.max - 1).addingSaturated(Int.max), .max)
        XCTAssertEqual(Int.min.addingSaturated(-1), .min)
    }
}
