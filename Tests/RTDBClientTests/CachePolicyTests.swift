import XCTest
import RTDBData
@testable import RTDBClient

/// What the disk cache keeps: its bounds, and what of an acknowledged write becomes cached
/// server data (`CachePolicy.steps`), case by case.
final class CachePolicyTests: XCTestCase {
    private func steps(_ path: String, _ written: [(String, Node, Bool)], cached: Bool = true, listened: [String] = [],
                       whole: [String] = [], wholeBefore: [String] = []) -> [CachePolicy.Step] {
        CachePolicy.steps(acknowledging: Path(path), written: written.map { (Path($0.0), $0.1, $0.2) }, cached: cached,
                          listened: listened.map(Path.init), whole: whole.map(Path.init), wholeBefore: wholeBefore.map(Path.init))
    }

    func testAnAcknowledgedValueIsKeptWholeAtEachLocationWritten() {
        XCTAssertEqual(steps("a", [("a/b", Node(1), false), ("a/c", Node("x"), false)]),
                       [.keep(Path("a/b"), Node(1)), .keep(Path("a/c"), Node("x"))])
    }

    /// A listen of the whole location has the server's own data already.
    func testALocationListenedToWholeIsLeftToItsListen() {
        XCTAssertEqual(steps("a", [("a/b", Node(1), false), ("c/d", Node(2), false)], listened: ["a"], whole: ["a"]),
                       [.keep(Path("c/d"), Node(2))])
    }

    /// A server value's outcome is the server's to say: the estimate is not kept, and the
    /// places below listened to whole since before the write keep what the server sent.
    func testAnEstimatedServerValueIsForgottenButForWhatListensBelowHeld() {
        XCTAssertEqual(steps("a", [("a", Node(5), true)], listened: ["a/x", "a/y"], whole: ["a/x", "a/y"], wholeBefore: ["a/x"]),
                       [.forget(Path("a"), except: [Path("a/x")])])
    }

    /// An import's write (not cached) forgets what the disk held, at once for the whole
    /// write where no listen is near it, and entry by entry where one is.
    func testAnUncachedWriteForgetsWhatTheDiskHeld() {
        XCTAssertEqual(steps("big", [("big/a", Node(1), false), ("big/b", Node(2), false)], cached: false),
                       [.forget(Path("big"), except: [])])
        XCTAssertEqual(steps("big", [("big/a", Node(1), false), ("big/b", Node(2), false)], cached: false, listened: ["big/b/c"]),
                       [.forget(Path("big/a"), except: []), .keep(Path("big/b"), Node(2))])
    }

    func testBounds() {
        let policy = CachePolicy(limit: 1000)
        XCTAssertFalse(policy.shouldCheck(written: 100, queriesUsed: 100))
        XCTAssertTrue(policy.shouldCheck(written: 101, queriesUsed: 0))
        XCTAssertTrue(policy.shouldCheck(written: 0, queriesUsed: 101))
        XCTAssertFalse(policy.isOver(size: 1000, queries: CachePolicy.maxQueries))
        XCTAssertTrue(policy.isOver(size: 1001, queries: 0))
        XCTAssertTrue(policy.isAboveTarget(size: 801, queries: 0))
        XCTAssertFalse(policy.isAboveTarget(size: 800, queries: 800))
    }
}
