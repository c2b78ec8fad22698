import Foundation
import XCTest
import RTDBData
@testable import RTDBEngine
@testable import RTDBServer

final class NamespacesTests: XCTestCase {
    /// Databases nobody uses are closed after a while (their folder unlocked, their memory
    /// freed) and open again on the next use; one in use stays open.
    func testIdleNamespacesCloseAndReopen() throws {
        let namespaces = try Namespaces(folder: NSTemporaryDirectory() + "rtdb-namespaces-" + UUID().uuidString)
        XCTAssertNil(try namespaces.acquire("ghost", create: false), "a read of nothing opens nothing")
        XCTAssertFalse(FileManager.default.fileExists(atPath: namespaces.folder + "/ghost"))
        let busy = try XCTUnwrap(namespaces.acquire("busy"))
        let idle = try XCTUnwrap(namespaces.acquire("idle"))
        let done = expectation(description: "written")
        idle.submit(.put(path: Path("a"), data: Node(1), hash: nil)) { _ in done.fulfill() }
        wait(for: [done], timeout: 10)
        namespaces.release("idle")
        XCTAssertEqual(namespaces.openCount, 2)
        namespaces.closeIdle(now: Date().addingTimeInterval(namespaces.idleClose - 5))
        XCTAssertEqual(namespaces.openCount, 2, "not idle long enough")
        namespaces.closeIdle(now: Date().addingTimeInterval(namespaces.idleClose + 1))
        XCTAssertEqual(namespaces.openCount, 1, "the busy one stays")
        let again = try XCTUnwrap(namespaces.acquire("idle", create: false))
        XCTAssertEqual(again.value(at: Path("a")), Node(1))
        XCTAssertFalse(again === idle)
        namespaces.release("idle")
        namespaces.release("busy")
        _ = busy
        namespaces.closeAll()
    }
}
