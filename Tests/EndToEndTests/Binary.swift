import Foundation
import XCTest

/// Runs the built `rtdb` as a user would: arguments, standard input, exit status, output.
struct Binary {
    static var path: String {
        let bundle = Bundle(for: BundleMarker.self).bundleURL
        let candidates = [bundle.appendingPathComponent("rtdb"), bundle.deletingLastPathComponent().appendingPathComponent("rtdb")]
        return (candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[1]).path
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// `folder`: the working directory (the test's own when nil). `timeout`: a run still
    /// going after it is stopped and reported as an error rather than waited for.
    static func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:], in folder: String? = nil,
                    timeout: TimeInterval? = nil) throws -> Result {
        let running = try start(arguments, environment: environment, in: folder)
        // Written beside the wait: a process that stops reading would block the writer.
        let handle = running.input, bytes = Data((input ?? "").utf8)
        let written = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? handle.write(contentsOf: bytes)
            try? handle.close()
            written.signal()
        }
        if let timeout {
            let deadline = Date().addingTimeInterval(timeout)
            while running.process.isRunning && Date() < deadline { usleep(10_000) }
            if running.process.isRunning {
                kill(running.process.processIdentifier, SIGKILL)
                running.process.waitUntilExit()
                written.wait()
                let stderr = running.stderr.text()
                throw NSError(domain: "rtdb-tests", code: 2, userInfo: [NSLocalizedDescriptionKey: "rtdb \(arguments) still ran after \(timeout) s; its standard error: \(stderr)"])
            }
        }
        running.process.waitUntilExit()
        written.wait()
        return Result(status: running.process.terminationStatus, stdout: running.stdout.text(), stderr: running.stderr.text())
    }

    /// A running `rtdb`: its standard input to write to, its outputs read as they come (so a
    /// large output cannot block it).
    struct Running {
        let process: Process
        let input: FileHandle
        let stdout: Drain
        let stderr: Drain

        func interrupt() {
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
        }
    }

    static func start(_ arguments: [String], environment: [String: String] = [:], in folder: String? = nil) throws -> Running {
        // A process that exits (or is stopped) before reading all its input closes the pipe
        // under its writer: an error for the writer, not a signal that ends the tests.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let folder { process.currentDirectoryURL = URL(fileURLWithPath: folder) }
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = NSTemporaryDirectory()
        // A disk cache of its own: no test sees another's cached data or queued writes.
        env["XDG_CACHE_HOME"] = temporaryFolder()
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        return Running(process: process, input: stdin.fileHandleForWriting,
                       stdout: Drain(stdout.fileHandleForReading), stderr: Drain(stderr.fileHandleForReading))
    }

    /// Runs `command` (a shell command line) at a terminal, a pty from script(1), typing
    /// `input`; returns its exit status and what the terminal showed (newlines as "\n").
    /// `environment` adds to this process's, with HOME a temporary folder unless it says.
    static func terminal(_ command: String, input: String, environment: [String: String?] = [:]) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = NSTemporaryDirectory()
        // A disk cache of its own: no test sees another's cached data or queued writes.
        env["XDG_CACHE_HOME"] = temporaryFolder()
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        let drain = Drain(stdout.fileHandleForReading)
        stdin.fileHandleForWriting.write(Data(input.utf8))
        process.waitUntilExit()
        return (process.terminationStatus, drain.text().replacingOccurrences(of: "\r\n", with: "\n"))
    }

    /// Starts `rtdb serve` on `port` (0: a free one); returns the process and the port it
    /// says it uses.
    static func startServer(folder: String, port: Int = 0, arguments: [String] = []) throws -> (Process, Int) {
        let (server, port, _) = try startLoggingServer(folder: folder, port: port, arguments: arguments)
        return (server, port)
    }

    /// As `startServer`, with the server's log (standard error), read as it comes.
    static func startLoggingServer(folder: String, port: Int = 0, arguments: [String] = []) throws -> (Process, Int, Drain) {
        let server = Process()
        server.executableURL = URL(fileURLWithPath: path)
        server.arguments = ["serve", "--port", String(port), "--data", folder] + arguments
        let out = Pipe(), err = Pipe()
        server.standardOutput = out
        server.standardError = err
        try server.run()
        let log = Drain(err.fileHandleForReading)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: #"127\.0\.0\.1:(\d+) "#, options: .regularExpression) else {
            throw NSError(domain: "rtdb-tests", code: 1, userInfo: [NSLocalizedDescriptionKey: "no listening line: \(text)"])
        }
        return (server, Int(text[range].dropFirst("127.0.0.1:".count).dropLast())!, log)
    }

    static func temporaryFolder() -> String {
        NSTemporaryDirectory() + "rtdb-e2e-" + UUID().uuidString
    }
}

final class BundleMarker {}

/// Reads a pipe to its end on another thread; what has come so far can be awaited.
final class Drain: @unchecked Sendable {
    private var data = Data()
    private let lock = NSLock()
    private let done = DispatchSemaphore(value: 0)
    init(_ handle: FileHandle) {
        DispatchQueue.global().async { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.lock(); data.append(chunk); lock.unlock()
            }
            done.signal()
        }
    }

    /// Everything, once the writer has closed the pipe.
    func text() -> String {
        done.wait()
        done.signal()
        lock.lock(); defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }

    /// What has arrived so far (for messages about a process still running).
    func current() -> String {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }

    /// Waits until what has arrived contains `needle`; false after `timeout`.
    func waitFor(_ needle: String, timeout: TimeInterval = 15) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            lock.lock()
            let found = String(decoding: data, as: UTF8.self).contains(needle)
            lock.unlock()
            if found { return true }
            usleep(20_000)
        }
        return false
    }
}
