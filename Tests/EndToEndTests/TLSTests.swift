import Foundation
import XCTest

/// `wss://` and `https://`: `rtdb serve --tls-cert/--tls-key` and the shell's TLS client,
/// with a certificate made for the test (localhost and 127.0.0.1).
final class TLSTests: XCTestCase {
    var server: Process!
    var port = 0
    var certificate = ""

    override func setUpWithError() throws {
        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        certificate = folder + "/cert.pem"
        let key = folder + "/key.pem"
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                             "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                             "-keyout", key, "-out", certificate]
        openssl.standardError = Pipe()
        try openssl.run()
        openssl.waitUntilExit()
        XCTAssertEqual(openssl.terminationStatus, 0)
        (server, port) = try Binary.startServer(folder: folder + "/data", arguments: ["--tls-cert", certificate, "--tls-key", key])
    }

    override func tearDown() {
        kill(server.processIdentifier, SIGTERM)
        server.waitUntilExit()
    }

    func testTheShellTalksTLSToATrustedServer() throws {
        let byAddress = try Binary.run(["--url", "wss://127.0.0.1:\(port)?ns=demo", "--cacert", certificate,
                                        "-c", #"set /greeting "hello""#, "-c", "get /greeting"])
        XCTAssertEqual(byAddress.status, 0, byAddress.stderr)
        XCTAssertEqual(byAddress.stdout, "\"hello\"\n")
        // By name: the name is sent (SNI) and must be in the certificate.
        let byName = try Binary.run(["--url", "https://localhost:\(port)?ns=demo", "--cacert", certificate, "get", "/greeting"])
        XCTAssertEqual(byName.status, 0, byName.stderr)
        XCTAssertEqual(byName.stdout, "\"hello\"\n")
    }

    func testAnUntrustedCertificateIsRefusedWithAReason() throws {
        let refused = try Binary.run(["--url", "wss://127.0.0.1:\(port)?ns=demo", "get", "/"])
        XCTAssertEqual(refused.status, 3)
        XCTAssertEqual(refused.stderr, "rtdb: cannot connect to wss://127.0.0.1:\(port)/.ws?ns=demo: the server's TLS certificate is not trusted (give its certificate with --cacert FILE)\n")
        let plain = try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=demo", "get", "/"])
        XCTAssertEqual(plain.status, 3)
        let missing = try Binary.run(["--url", "wss://127.0.0.1:\(port)?ns=demo", "--cacert", "/nonexistent.pem", "get", "/"])
        XCTAssertEqual(missing.status, 3)
        XCTAssertEqual(missing.stderr, "rtdb: cannot read the certificate file /nonexistent.pem\n")
    }
}
