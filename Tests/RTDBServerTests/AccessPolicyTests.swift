import XCTest
@testable import RTDBServer

/// Which hosts and pages the server answers, by default and widened.
final class AccessPolicyTests: XCTestCase {
    func testHosts() {
        let policy = AccessPolicy()
        for host in [nil, "127.0.0.1:9000", "localhost", "LOCALHOST:9000", "demo.localhost:9000", "[::1]:9000",
                     "192.168.1.20:9000", "10.0.0.1"] {
            XCTAssertNil(policy.refusal(host: host), host ?? "nil")
        }
        for host in ["attacker.example:9000", "localhost.attacker.example", "127.0.0.1.nip.io", "example"] {
            XCTAssertNotNil(policy.refusal(host: host), host)
        }
        XCTAssertNil(AccessPolicy(listenHost: "devbox").refusal(host: "devbox:9000"))
        XCTAssertNil(AccessPolicy(allowedHosts: ["DB.example"]).refusal(host: "db.example:443"))
        XCTAssertNil(AccessPolicy(allowedHosts: ["*"]).refusal(host: "anything.example"))
    }

    func testOrigins() {
        let policy = AccessPolicy()
        for origin in [nil, "http://localhost:5173", "https://localhost", "http://127.0.0.1:3000", "http://[::1]:8080",
                       "http://app.localhost:5173"] {
            XCTAssertNil(policy.refusal(origin: origin), origin ?? "nil")
        }
        for origin in ["http://evil.example", "null", "http://localhost.evil.example", "file://", "http://192.168.1.5:3000"] {
            XCTAssertEqual(policy.refusal(origin: origin),
                           "requests from web pages at \(origin) are refused; start rtdb serve with --allow-origin \(origin) to allow them")
        }
        XCTAssertNil(AccessPolicy(allowedOrigins: ["https://App.example"]).refusal(origin: "https://app.example"))
        XCTAssertNil(AccessPolicy(allowedOrigins: ["*"]).refusal(origin: "http://evil.example"))
    }

    func testLoopbackListenAddresses() {
        XCTAssertTrue(AccessPolicy.isLoopback(listenHost: "127.0.0.1"))
        XCTAssertTrue(AccessPolicy.isLoopback(listenHost: "localhost"))
        XCTAssertTrue(AccessPolicy.isLoopback(listenHost: "::1"))
        XCTAssertFalse(AccessPolicy.isLoopback(listenHost: "0.0.0.0"))
        XCTAssertFalse(AccessPolicy.isLoopback(listenHost: "::"))
        XCTAssertFalse(AccessPolicy.isLoopback(listenHost: "192.168.1.20"))
    }
}
