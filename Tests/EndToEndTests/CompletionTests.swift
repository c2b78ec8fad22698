import Foundation
import XCTest

/// The bash completion script, run by bash against a real data folder.
final class CompletionTests: XCTestCase {
    func complete(_ words: [String], folder: String) throws -> [String] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("completions/rtdb.bash").path
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program = """
        source '\(script)'
        COMP_WORDS=(rtdb --data '\(folder)' \(quoted)); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _rtdb
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
}
