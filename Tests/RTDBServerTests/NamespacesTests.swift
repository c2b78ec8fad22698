import Foundation
import XCTest
import RTDBData
@testable import RTDBEngine
@testable import RTDBServer
import NIOHTTP1
import RTDBRules
import Synchronization

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

    /// Each namespace counts its own requests' coverage, kept while its database closes when
    /// idle and opens again; a server listening beyond this machine shows it to its owner only.
    func testCoverageIsPerNamespaceAndOutlivesAnIdleClose() throws {
        let rules = try SecurityRules(parsing: #"{"rules": {".read": "auth.uid == 'ada'"}}"#)
        for toClients in [true, false] {
            let namespaces = try Namespaces(folder: NSTemporaryDirectory() + "rtdb-namespaces-" + UUID().uuidString, rules: rules,
                                            explanations: RuleExplanations(toClients: toClients))
            let ada = Identity.user(uid: "ada", claims: .object([]), expires: nil)
            let a = try XCTUnwrap(namespaces.acquire("a"))
            XCTAssertTrue(a.canRead(Path("x"), query: nil, as: ada))
            namespaces.release("a")
            namespaces.closeIdle(now: Date().addingTimeInterval(namespaces.idleClose + 1))
            XCTAssertEqual(namespaces.openCount, 0)
            let again = try XCTUnwrap(namespaces.acquire("a", create: false))
            XCTAssertFalse(again.canRead(Path("x"), query: nil, as: .anonymous))
            namespaces.release("a")
            XCTAssertEqual(RuleCoverageReport.summary(namespaces.coverage(for: "a").entries[0].parts[0].tally), "true ×1, error ×1 (cannot read 'uid' of null)")
            XCTAssertEqual(RuleCoverageReport.summary(namespaces.coverage(for: "b").entries[0].parts[0].tally), "never evaluated")

            let router = RESTRouter(namespaces: namespaces, log: { _ in })
            func get(_ target: String) -> (HTTPResponseStatus, String) {
                let answer = Mutex<(HTTPResponseStatus, String)>((.internalServerError, ""))
                router.route(HTTPRequestHead(version: .http1_1, method: .GET, uri: target), body: []) { outcome in
                    if case .reply(let reply) = outcome { answer.withLock { $0 = (reply.status, String(decoding: reply.body, as: UTF8.self)) } }
                }
                return answer.withLock { $0 }
            }
            let anyone = get("/.inspect/coverage.json?ns=a")
            let owner = get("/.inspect/coverage.json?ns=a&auth=owner")
            XCTAssertEqual(owner.0, .ok)
            XCTAssertTrue(owner.1.hasPrefix(#"{"source":"{\"rules\": {\".read\": \"auth.uid == 'ada'\"}}","rules":[{"rule":"/.read","line":1,"column":22,"text":"auth.uid == 'ada'","evaluations":2,"#), owner.1)
            if toClients {
                XCTAssertEqual(anyone.0, .ok)
                XCTAssertEqual(anyone.1, owner.1)
            } else {
                XCTAssertEqual(anyone.0, .unauthorized)
                XCTAssertEqual(anyone.1, #"{"error":"Permission denied: only the owner may read the rules coverage of a server that listens beyond this machine"}"#)
            }
            namespaces.closeAll()
            try? FileManager.default.removeItem(atPath: namespaces.folder)
        }
    }
}
