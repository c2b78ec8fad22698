import XCTest
import RTDBProtocol

/// Database URLs as users type them, and where a server's hello or redirect sends a client.
final class ServerAddressTests: XCTestCase {
    func testURLsNameHostPortAndNamespace() throws {
        let cases: [(String, ServerAddress)] = [
            ("ws://127.0.0.1:9000?ns=demo", ServerAddress(host: "127.0.0.1", port: 9000, namespace: "demo")),
            ("http://localhost:9000", ServerAddress(host: "localhost", port: 9000, namespace: "default")),
            ("ws://127.0.0.1:9000", ServerAddress(host: "127.0.0.1", port: 9000, namespace: "default")),
            ("https://My-App.firebaseio.com", ServerAddress(host: "My-App.firebaseio.com", port: 443, namespace: "my-app", secure: true)),
            ("https://app-default-rtdb.europe-west1.firebasedatabase.app/",
             ServerAddress(host: "app-default-rtdb.europe-west1.firebasedatabase.app", port: 443, namespace: "app-default-rtdb", secure: true)),
            ("wss://db.example.com:8443?ns=other", ServerAddress(host: "db.example.com", port: 8443, namespace: "other", secure: true)),
        ]
        for (text, expected) in cases { XCTAssertEqual(try ServerAddress.parse(text), expected, text) }
        XCTAssertThrowsError(try ServerAddress.parse("ftp://x")) { XCTAssertEqual("\($0)", #"unsupported URL scheme "ftp": use ws://, http://, wss:// or https://"#) }
        XCTAssertThrowsError(try ServerAddress.parse("nonsense")) { XCTAssertEqual("\($0)", "not a database URL: nonsense (try ws://127.0.0.1:9000?ns=demo)") }
    }

    func testRequestPathAndHostHeader() throws {
        let local = try ServerAddress.parse("ws://127.0.0.1:9000?ns=demo")
        XCTAssertEqual(local.webSocketPath(), "/.ws?v=5&ns=demo")
        XCTAssertEqual(local.webSocketPath(lastSessionID: "abc"), "/.ws?v=5&ls=abc&ns=demo")
        XCTAssertEqual(local.hostHeader, "127.0.0.1:9000")
        XCTAssertEqual(try ServerAddress.parse("https://app.firebaseio.com").hostHeader, "app.firebaseio.com")
    }

    func testMovesToTheHostAServerNames() throws {
        let hosted = try ServerAddress.parse("https://app.firebaseio.com")
        XCTAssertEqual(hosted.at(host: "s-usc1b-nss-2.firebaseio.com"),
                       ServerAddress(host: "s-usc1b-nss-2.firebaseio.com", port: 443, namespace: "app", secure: true))
        let local = try ServerAddress.parse("ws://127.0.0.1:9000?ns=demo")
        XCTAssertEqual(local.at(host: "localhost:9100"), ServerAddress(host: "localhost", port: 9100, namespace: "demo"))
        XCTAssertEqual(local.at(host: "[::1]:9100"), ServerAddress(host: "::1", port: 9100, namespace: "demo"))
    }
}
