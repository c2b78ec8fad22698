import Foundation
import RTDBShell
import XCTest

/// The bash completion script, run by bash against a real data folder.
final class CompletionTests: XCTestCase {
    func complete(_ words: [String], folder: String) throws -> [String] {
        try complete(words, database: ["--data", folder])
    }

    /// COMPREPLY for `rtdb DATABASE WORDS…`, the cursor at the end of the last word.
    func complete(_ words: [String], database: [String]) throws -> [String] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("completions/rtdb.bash").path
        let quoted = (database + words).map { "'\($0)'" }.joined(separator: " ")
        let program = """
        source '\(script)'
        COMP_LINE='rtdb \((database + words).joined(separator: " "))'; COMP_POINT=${#COMP_LINE}
        COMP_WORDS=(rtdb \(quoted)); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _rtdb
        printf '%s\\n' "${COMPREPLY[@]}"
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", program]
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = URL(fileURLWithPath: Binary.path).deletingLastPathComponent().path + ":" + (env["PATH"] ?? "")
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        process.waitUntilExit()
        return String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").map(String.init)
    }

    func testCommandsFlagsAndKeys() throws {
        let folder = Binary.temporaryFolder()
        _ = try Binary.run(["--data", folder, "-c", #"set /users {"ada": {"n": 1}, "adam": 2, "bob": 3}"#, "-c", "set /uploads/x 1"])
        XCTAssertEqual(try complete(["up"], folder: folder), ["update"])
        XCTAssertEqual(try complete(["get", "/u"], folder: folder), ["/uploads", "/users"])
        XCTAssertEqual(try complete(["get", "/users/ad"], folder: folder), ["/users/ada", "/users/adam"])
        XCTAssertEqual(try complete(["rm", "/users/b"], folder: folder), ["/users/bob/"])
        XCTAssertEqual(try complete(["get", "/x", "--sh"], folder: folder), ["--shallow"])
    }

    /// The words some commands take first, then the next ones after them.
    func testTheWordsACommandTakesFirst() throws {
        let folder = Binary.temporaryFolder()
        XCTAssertEqual(try complete(["snapshot", ""], folder: folder), ["save", "restore", "list", "rm"])
        XCTAssertEqual(try complete(["snapshot", "r"], folder: folder), ["restore", "rm"])
        XCTAssertEqual(try complete(["snapshot", "save", ""], folder: folder), [])
        XCTAssertEqual(try complete(["rules", "ch"], folder: folder), ["check"])
        XCTAssertEqual(try complete(["rules", "check", ""], folder: folder), ["read", "write", "update"])
        XCTAssertEqual(try complete(["rules", "check", "--a"], folder: folder), ["--as"])
    }

    /// zsh and fish read the scripts without a syntax error (a quote in a help text once
    /// broke the zsh one).
    func testZshAndFishScriptsParse() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        for (shell, arguments) in [("/usr/bin/zsh", ["-n", root + "/completions/_rtdb"]), ("/usr/bin/fish", ["--no-execute", root + "/completions/rtdb.fish"])] {
            guard FileManager.default.isExecutableFile(atPath: shell) else { throw XCTSkip("\(shell) is not installed (scripts/test installs it)") }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: shell)
            process.arguments = arguments
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            process.waitUntilExit()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTAssertEqual(process.terminationStatus, 0, "\(shell): \(text)")
            XCTAssertEqual(text, "", shell)
        }
    }

    /// Keys of a served database, read through the --url the command line names.
    func testKeysOfAServedDatabase() throws {
        let (server, port) = try Binary.startServer(folder: Binary.temporaryFolder())
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let url = "ws://127.0.0.1:\(port)?ns=keys"
        XCTAssertEqual(try Binary.run(["--url", url, "set", "/users", #"{"ada": 1, "adam": {"x": 2}}"#]).status, 0)
        XCTAssertEqual(try complete(["get", "/users/ad"], database: ["--url", url]), ["/users/ada", "/users/adam"])
        XCTAssertEqual(try complete(["--json", "ls", "/users/adam"], database: ["--emulator", "127.0.0.1:\(port)", "--ns", "keys"]), ["/users/adam/"])
        // A --data folder that does not exist is not made, and has no keys.
        let missing = Binary.temporaryFolder()
        XCTAssertEqual(try complete(["get", "/u"], folder: missing), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))
    }
}

/// The options the completion scripts offer are the options the program takes.
final class ProgramOptionTests: XCTestCase {
    func options(in help: String) -> Set<String> {
        let section = help.components(separatedBy: "OPTIONS:").last ?? ""
        var found = Set<String>()
        for line in section.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("-") else { continue }
            // The option's names start its line; a wrapped description may mention one too.
            for word in trimmed.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "/" }) {
                guard word.hasPrefix("-") || word.hasPrefix("<") else { break }
                if word.hasPrefix("-") && word.dropFirst().allSatisfy({ $0.isLetter || $0 == "-" }) { found.insert(String(word)) }
            }
        }
        return found
    }

    func testTheTableMatchesTheArgumentParser() throws {
        let global = try Binary.run(["--help"])
        XCTAssertEqual(options(in: global.stdout), Set(ProgramOption.global.flatMap { [$0.name] + ($0.short.map { [$0] } ?? []) }), global.stdout)
        let serve = try Binary.run(["serve", "--help"])
        XCTAssertEqual(options(in: serve.stdout), Set(ProgramOption.serve.flatMap { [$0.name] + ($0.short.map { [$0] } ?? []) }), serve.stdout)
        let script = try Binary.run(["completions", "bash"])
        XCTAssertEqual(script.stdout, CompletionScript.script(for: "bash"))
        XCTAssertEqual(try Binary.run(["completions", "csh"]).status, 2)
    }
}
