import Foundation
import XCTest

/// `namespaces` and `use` on a server, `--emulator` alone, and the prompt naming the namespace.
final class NamespaceTests: XCTestCase {
    var server: Process!
    var port = 0

    override func setUpWithError() throws {
        (server, port) = try Binary.startServer(folder: Binary.temporaryFolder())
    }

    override func tearDown() {
        kill(server.processIdentifier, SIGTERM)
        server.waitUntilExit()
    }

    func testAScriptListsAndMovesBetweenNamespaces() throws {
        XCTAssertEqual(try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=alpha", "set", "/x", "1"]).status, 0)
        let result = try Binary.run(["--emulator", "127.0.0.1:\(port)", "--ns", "alpha"], input: """
            namespaces
            cd /deep
            use beta
            pwd
            set /y 2
            namespaces --json
            get /
            use alpha
            get /x
            use alpha
            use no/such

            """)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(result.stdout, "* alpha\n/\n[\"alpha\",\"beta\"]\n{\"y\":2}\n1\n")
        XCTAssertEqual(result.stderr, """
            now on namespace beta (ws://127.0.0.1:\(port)/.ws?ns=beta)
            now on namespace alpha (ws://127.0.0.1:\(port)/.ws?ns=alpha)
            already on namespace alpha
            error: line 11, column 5: 'no/such' is not a namespace name: letters, digits, "-" and "_", at most 64
              use no/such
                  ^

            """)
        // The write made in beta is there, and only there.
        XCTAssertEqual(try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=beta", "get", "/"]).stdout, "{\"y\":2}\n")
        XCTAssertEqual(try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=alpha", "get", "/y"]).stdout, "null\n")
    }

    func testAnEmbeddedDatabaseHasOneNamespace() throws {
        let result = try Binary.run(["--data", Binary.temporaryFolder(), "-c", "use beta"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "error: -c 1: an embedded database has one namespace; namespaces and use work with a server (rtdb --url … or --emulator HOST:PORT)\n")
    }

    func testEmulatorAloneTakesTheEnvironment() throws {
        XCTAssertEqual(try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=env", "set", "/v", "\"here\""]).status, 0)
        let found = try Binary.run(["--emulator", "--ns", "env", "get", "/v"], environment: ["FIREBASE_DATABASE_EMULATOR_HOST": "127.0.0.1:\(port)"])
        XCTAssertEqual(found.stdout, "\"here\"\n", found.stderr)
        let last = try Binary.run(["--ns", "env", "--emulator"], input: "get /v\n", environment: ["FIREBASE_DATABASE_EMULATOR_HOST": "127.0.0.1:\(port)"])
        XCTAssertEqual(last.stdout, "\"here\"\n", last.stderr)
        let unset = try Binary.run(["--emulator", "get", "/v"], environment: ["FIREBASE_DATABASE_EMULATOR_HOST": ""])
        XCTAssertEqual(unset.status, 2)
        XCTAssertTrue(unset.stderr.hasPrefix("Error: --emulator without HOST:PORT takes FIREBASE_DATABASE_EMULATOR_HOST, which is not set\n"), unset.stderr)
    }

    /// The credential chosen with `auth` goes to the next namespace, and `logout` too.
    func testTheChosenCredentialGoesAlong() throws {
        kill(server.processIdentifier, SIGTERM)
        server.waitUntilExit()
        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let rules = folder + "/rules.json"
        try Data(#"{"rules": {".read": "auth != null", ".write": "auth != null"}}"#.utf8).write(to: URL(fileURLWithPath: rules))
        (server, port) = try Binary.startServer(folder: folder + "/data", arguments: ["--rules", rules])
        let result = try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=one", "--keep-going"], input: """
            auth --uid ada
            use two
            set /by ada
            status --json
            logout
            use three
            set /by nobody
            use two
            get /by

            """)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stdout.contains(#""credential":"ID token for uid ada (unsigned, from auth --uid)""#), result.stdout)
        // ada writes in two; after logout, three refuses the write and two the read.
        XCTAssertEqual(result.stderr, """
            authenticated as ID token for uid ada (unsigned, from auth --uid)
            now on namespace two (ws://127.0.0.1:\(port)/.ws?ns=two)
            logged out: the server sees no credential
            now on namespace three (ws://127.0.0.1:\(port)/.ws?ns=three)
            error: line 7: write rejected: PERMISSION_DENIED at /by: Permission denied: no .write rule allows this write: /.write: auth != null → null != null → false
            now on namespace two (ws://127.0.0.1:\(port)/.ws?ns=two)
            error: line 9: PERMISSION_DENIED: Permission denied: no .read rule allows this read: /.read: auth != null → null != null → false

            """)
    }

    /// At a terminal the prompt names the namespace, and `use` changes it.
    func testThePromptNamesTheNamespace() throws {
        let (status, text) = try Binary.terminal("'\(Binary.path)' --url 'ws://127.0.0.1:\(port)?ns=first' --no-color",
                                                 input: "set /a 1\nuse second\nget /a\nexit\n")
        XCTAssertEqual(status, 0, text)
        for expected in ["rtdb@first:/> set /a 1\n", "rtdb@first:/> use second\nnow on namespace second",
                         "rtdb@second:/> get /a\nnull\n", "rtdb@second:/> exit"] {
            XCTAssertTrue(text.contains(expected), "missing \(expected) in:\n\(text)")
        }
    }
}
