import XCTest
import RTDBProtocol

/// One reading of host names for client and server.
final class HostNameTests: XCTestCase {
    func testNamespaceFromHost() {
        let cases = ["my-app.firebaseio.com": "my-app", "App.europe-west1.firebasedatabase.app": "app", "demo.localhost": "demo",
                     "example.com": "default", "mybox.lan": "default", "localhost": "default", "127.0.0.1": "default", "::1": "default", "10.0.0.1": "default"]
        for (host, namespace) in cases { XCTAssertEqual(HostName.namespace(of: host), namespace, host) }
        // A client connecting to demo.localhost uses the namespace the server reads from its Host.
        XCTAssertEqual(try ServerAddress.parse("ws://demo.localhost:9000").namespace, "demo")
    }

    func testHostHeaders() {
        XCTAssertEqual(HostName.name(ofHostHeader: "Demo.Localhost:9000"), "demo.localhost")
        XCTAssertEqual(HostName.name(ofHostHeader: "[::1]:9000"), "::1")
        XCTAssertEqual(HostName.name(ofHostHeader: "127.0.0.1"), "127.0.0.1")
        XCTAssertTrue(HostName.isIPAddress("::1"))
        XCTAssertTrue(HostName.isIPAddress("192.168.0.1"))
        XCTAssertFalse(HostName.isIPAddress("127.0.0.1.nip.io"))
        for host in ["localhost", "Demo.LocalHost", "127.0.0.1", "127.1.2.3", "::1"] { XCTAssertTrue(HostName.isLoopback(host), host) }
        for host in ["127.0.0.1.nip.io", "0.0.0.0", "::", "10.0.0.1", "example.com"] { XCTAssertFalse(HostName.isLoopback(host), host) }
        XCTAssertFalse(HostName.isIPAddress("1.2.3"))
    }
}
