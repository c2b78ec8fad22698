// swift-tools-version:6.0
import PackageDescription

/// The program's allocator on Linux: mimalloc (Debian's libmimalloc-dev), linked so that it
/// replaces glibc's malloc for the whole process. The client core, the connection and the
/// engine run on different threads, and memory one of them allocates another frees: glibc's
/// small per-thread caches overflow on that traffic (its malloc and free were 15% of a
/// pipelined write's profile); with mimalloc a write takes a quarter less CPU in all
/// (`Benchmarks/run`, the `writes` and `stdin` rows). The test bundle
/// links it too (EndToEndTests take in the executable's module): the tests run on it.
let mimalloc = LinkerSetting.linkedLibrary("mimalloc", .when(platforms: [.linux]))

// Linux only: the store, the shell's terminal and signal handling call Glibc directly, and
// the client's cache links Debian's SQLite. No other platform is declared.
let package = Package(
    name: "rtdb",
    products: [
        .executable(name: "rtdb", targets: ["rtdb"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // The value model shared by client and server.
        .target(name: "RTDBData", dependencies: [
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Realtime protocol messages, their wire form, the transport abstraction; no I/O.
        .target(name: "RTDBProtocol", dependencies: ["RTDBData"]),
        // The realtime protocol over WebSocket and TLS (SwiftNIO): the client's transport and
        // the frame handling both ends share.
        .target(name: "RTDBTransport", dependencies: [
            "RTDBProtocol",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        // SQLite (Debian's libsqlite3), for the client's disk cache.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The client core, with its disk cache.
        .target(name: "RTDBClient", dependencies: ["RTDBData", "RTDBProtocol", "CSQLite"]),
        // Security rules: the rules language, who a credential names, what a request may do.
        .target(name: "RTDBRules", dependencies: ["RTDBData"]),
        // The engine: a database's live tree, its durable store, sessions and listens.
        .target(name: "RTDBEngine", dependencies: ["RTDBData", "RTDBProtocol", "RTDBRules"]),
        // `rtdb serve`: the engine's network fronts (WebSocket, REST, Server-Sent Events).
        .target(name: "RTDBServer", dependencies: [
            "RTDBData", "RTDBProtocol", "RTDBRules", "RTDBEngine", "RTDBTransport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // libedit, with inline non-variadic wrappers.
        .systemLibrary(name: "CEditLine", pkgConfig: "libedit", providers: [.apt(["libedit-dev"])]),
        // The allocator's options and collection, for `rtdb serve` (linked by `mimalloc` above).
        .systemLibrary(name: "CMimalloc", providers: [.apt(["libmimalloc-dev"])]),
        // Command language, renderers, line editor, batch runner.
        .target(name: "RTDBShell", dependencies: ["RTDBClient", "RTDBRules", "CEditLine"]),
        .executableTarget(name: "rtdb", dependencies: [
            "RTDBShell", "RTDBEngine", "RTDBServer", "RTDBProtocol", "RTDBRules", "RTDBTransport", "RTDBClient",
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .target(name: "CMimalloc", condition: .when(platforms: [.linux])),
        ], linkerSettings: [
            // Swift exports every symbol of an executable; nothing looks them up, and the
            // runtime's start-up scans them (dladdr). Release only: debug builds keep the
            // defaults the tests run with.
            .unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux], configuration: .release)),
            mimalloc,
        ]),
        .executableTarget(name: "RTDBBenchmarks", dependencies: ["RTDBData", "RTDBRules", "RTDBEngine", "RTDBServer", "RTDBClient", "RTDBTransport", "RTDBShell", "CSQLite", "CMimalloc",
                                                                 "RTDBTestSupport", .product(name: "NIOPosix", package: "swift-nio")],
                          path: "Benchmarks/RTDBBenchmarks", linkerSettings: [mimalloc]),

        .testTarget(name: "RTDBDataTests", dependencies: ["RTDBData", "RTDBTestSupport"]),
        .testTarget(name: "RTDBProtocolTests", dependencies: ["RTDBProtocol", "RTDBTestSupport"]),
        // RuleCases.json is also read by Tests/Python/test_rules.py, against rtdb serve.
        .testTarget(name: "RTDBRulesTests", dependencies: ["RTDBRules", "RTDBData"], exclude: ["RuleCases.json"]),
        .testTarget(name: "RTDBEngineTests", dependencies: ["RTDBEngine", "RTDBRules", "RTDBClient", "RTDBTestSupport", "rtdb-crash-writer"]),
        .testTarget(name: "RTDBServerTests", dependencies: ["RTDBEngine", "RTDBServer", "RTDBRules", "RTDBTransport",
                                                         .product(name: "NIOEmbedded", package: "swift-nio"),
                                                         .product(name: "NIOWebSocket", package: "swift-nio"),
                                                         .product(name: "NIOHTTP1", package: "swift-nio")]),
        .executableTarget(name: "rtdb-crash-writer", dependencies: ["RTDBEngine", "RTDBClient"], path: "Tests/CrashWriter"),
        // What the fuzzer and tests share (a seeded random source, a size-limited connection).
        .target(name: "RTDBTestSupport", dependencies: ["RTDBProtocol"], path: "Tests/Support"),
        // Seeded mutation fuzzing of everything that reads untrusted bytes (scripts/fuzz).
        .executableTarget(name: "rtdb-fuzz", dependencies: ["RTDBData", "RTDBProtocol", "RTDBRules", "RTDBEngine", "RTDBServer", "RTDBShell", "RTDBTestSupport"],
                          path: "Tests/Fuzz", exclude: ["corpus"]),
        .testTarget(name: "RTDBClientTests", dependencies: ["RTDBClient", "RTDBEngine", "RTDBRules", "RTDBTestSupport"]),
        .testTarget(name: "RTDBShellTests", dependencies: ["RTDBShell", "RTDBEngine", "RTDBTestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["RTDBData", "RTDBShell", "rtdb"]),
    ],
    swiftLanguageModes: [.v6]
)
