import Foundation
import XCTest

/// The prompt as a person sees it, in a terminal tmux draws: what rtdb wrote, read back
/// with its colours (`capture-pane -e`), as tmux re-encodes them.
final class TerminalTests: XCTestCase {
    var socket = ""
    var folder = ""

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            throw XCTSkip("tmux is not installed (scripts/test installs it)")
        }
        socket = "rtdb-test-" + UUID().uuidString.prefix(8)
        folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        _ = try? tmux(["kill-server"])
    }

    /// Runs tmux and waits for it; `reading` its output. Spawned and waited for directly: the
    /// server tmux starts keeps the descriptors it inherits, and Foundation's `Process`
    /// would wait for that server to end, not for the command.
    @discardableResult
    func tmux(_ arguments: [String], reading: Bool = false) throws -> String {
        var ends: [Int32] = [-1, -1]
        if reading { guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if reading {
            posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
            posix_spawn_file_actions_addclose(&actions, ends[0])
            posix_spawn_file_actions_addclose(&actions, ends[1])
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = (["/usr/bin/tmux", "-L", socket] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, "/usr/bin/tmux", &actions, nil, argv, environ)
        var output = [UInt8]()
        if reading {
            close(ends[1])
            var buffer = [UInt8](repeating: 0, count: 65536)
            while spawned == 0 {
                let n = read(ends[0], &buffer, buffer.count)
                if n <= 0 { break }
                output += buffer[0..<n]
            }
            close(ends[0])
        }
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return String(decoding: output, as: UTF8.self)
    }

    /// The screen's rows, with their colours when `colours` (without the resets tmux puts at
    /// the start or the end of a row next to a coloured one, as it likes).
    func screen(colours: Bool = true) throws -> [String] {
        return try tmux(["capture-pane", "-p", "-t", "shell"] + (colours ? ["-e"] : []), reading: true).components(separatedBy: "\n").map { row in
            var row = row
            // Attributes switched off before the first character show nothing either.
            while let first = row.range(of: "^\u{1B}\\[[0-9;]*m", options: .regularExpression), row[first] == "\u{1B}[0m" || row[first] == "\u{1B}[39m" || row[first] == "\u{1B}[49m" {
                row.removeSubrange(first)
            }
            // Attributes switched off after the last character show nothing.
            while let last = row.range(of: "\u{1B}\\[[0-9;]*m$", options: .regularExpression) { row.removeSubrange(last) }
            return row
        }
    }

    /// Waits (10 s at most) for a row that `matches`, and returns it.
    func row(colours: Bool = true, _ matches: (String) -> Bool) throws -> String {
        for _ in 0..<200 {
            if let found = try screen(colours: colours).first(where: matches) { return found }
            usleep(50_000)
        }
        XCTFail("no such row on the screen:\n" + (try screen(colours: colours)).joined(separator: "\n"))
        return ""
    }

    /// The prompt's row once it reads `text` (hint included), as drawn with its colours:
    /// libedit draws each key's change, then the shell draws the row again styled; a moment
    /// after the text is all there, the styled row is.
    func prompt(reading text: String) throws -> String {
        for _ in 0..<200 {
            if try screen(colours: false).last(where: { $0.hasPrefix("rtdb:/>") }) == "rtdb:/> " + text { break }
            usleep(50_000)
        }
        usleep(300_000)
        let plain = try screen(colours: false)
        guard let index = plain.lastIndex(where: { $0.hasPrefix("rtdb:/>") }) else { return "" }
        let coloured = try screen()
        return index < coloured.count ? coloured[index] : ""
    }

    func type(_ text: String) throws { try tmux(["send-keys", "-t", "shell", "-l", text]) }

    /// Enter, then the wait for the next prompt: keys typed while a command runs are echoed by
    /// the terminal, not the line editor.
    func enter() throws {
        let prompts = try screen(colours: false).filter { $0.hasPrefix("rtdb:/>") }.count
        try press("Enter")
        for _ in 0..<200 {
            let now = try screen(colours: false).filter { $0.hasPrefix("rtdb:/>") }
            if now.count > prompts && now.last == "rtdb:/>" { return }
            usleep(50_000)
        }
        XCTFail("no new prompt:\n" + (try screen(colours: false)).joined(separator: "\n"))
    }
    func press(_ keys: String...) throws { try tmux(["send-keys", "-t", "shell"] + keys) }

    func start(width: Int = 100) throws {
        let command = "env -u NO_COLOR HOME='\(folder)' RTDB_HISTFILE='\(folder)/history' XDG_CACHE_HOME='\(folder)/cache' '\(Binary.path)' --data '\(folder)/db'"
        try tmux(["new-session", "-d", "-s", "shell", "-x", String(width), "-y", "20", command])
        _ = try row(colours: false) { $0.hasPrefix("rtdb:/>") }
    }

    /// A line is coloured as it is typed; a mistake is underlined in red before Enter.
    func testALineIsHighlightedAsItIsTyped() throws {
        try start()
        let line = #"set /users/ada {"name": "Ada", "n": 1} --priority 2"#
        try type(line)
        let esc = "\u{1B}"
        let styled = try prompt(reading: line)
        XCTAssertEqual(styled, "rtdb:/> \(esc)[1mset\(esc)[0m\(esc)[39m\(esc)[49m \(esc)[34m/users/ada\(esc)[39m {\"name\": \(esc)[32m\"Ada\"\(esc)[39m, \"n\": \(esc)[36m1\(esc)[39m} \(esc)[33m--priority\(esc)[39m \(esc)[36m2")
        try press("C-u")
        try type("sett /users")
        let mistake = try prompt(reading: "sett /users")
        XCTAssertEqual(mistake, "rtdb:/> \(esc)[4m\(esc)[31msett\(esc)[0m\(esc)[39m\(esc)[49m /users")
        try press("C-u")
        // The usage still to type, dimmed.
        try type("set /a ")
        let usage = try prompt(reading: "set /a VALUE [--priority P]")
        XCTAssertEqual(usage, "rtdb:/> \(esc)[1mset\(esc)[0m\(esc)[39m\(esc)[49m \(esc)[34m/a\(esc)[39m \(esc)[2mVALUE [--priority P]")
    }

    /// The newest history line that starts with what is typed is suggested, dimmed; → takes
    /// it, and Enter runs it without the dimmed text left behind.
    func testASuggestionIsShownAndAccepted() throws {
        try start()
        try type(#"set /notes/n1 {"text": "hello"}"#)
        try enter()
        try type("set /notes/n2 1")
        try enter()
        _ = try row(colours: false) { $0 == "rtdb:/> set /notes/n2 1" }
        try type("set /notes/n1")
        let esc = "\u{1B}"
        let suggested = try prompt(reading: #"set /notes/n1 {"text": "hello"}"#)
        XCTAssertEqual(suggested, "rtdb:/> \(esc)[1mset\(esc)[0m\(esc)[39m\(esc)[49m \(esc)[34m/notes/n1\(esc)[2m\(esc)[39m {\"text\": \"hello\"}")
        try press("Right")
        let accepted = try prompt(reading: #"set /notes/n1 {"text": "hello"}"#)
        XCTAssertEqual(accepted, "rtdb:/> \(esc)[1mset\(esc)[0m\(esc)[39m\(esc)[49m \(esc)[34m/notes/n1\(esc)[39m {\"text\": \(esc)[32m\"hello\"\(esc)[39m}")
        try enter()
        try type("get /notes/n1 --json")
        try press("Enter")
        let answer = try row(colours: false) { $0.hasPrefix("{") }
        XCTAssertEqual(answer, #"{"text":"hello"}"#)
        // Entered, the line was drawn again without its suggestion.
        XCTAssertEqual(try screen(colours: false).filter { $0.hasPrefix("rtdb:/> set /notes/n1") }, [#"rtdb:/> set /notes/n1 {"text": "hello"}"#, #"rtdb:/> set /notes/n1 {"text": "hello"}"#])
    }

    /// Enter with the cursor on the first row of a line over three rows: the line is drawn
    /// again in its place, and what was above it stays.
    func testEnterInAWrappedLineKeepsWhatIsAboveIt() throws {
        try start(width: 40)
        try type("set /a 1")
        try enter()
        let long = #"set /users/bob {"name": "Bob the builder", "n": 22, "ok": true}"#
        try type(long)
        _ = try row(colours: false) { $0.hasSuffix("true}") }
        try press("C-a")
        try enter()
        try type("get /users/bob/n")
        try press("Enter")
        _ = try row(colours: false) { $0 == "22" }
        let rows = try screen(colours: false).filter { !$0.isEmpty }
        XCTAssertEqual(Array(rows.suffix(6)), ["rtdb:/> set /a 1", "rtdb:/> set /users/bob {\"name\": \"Bob the", " builder\", \"n\": 22, \"ok\": true}",
                                               "rtdb:/> get /users/bob/n", "22", "rtdb:/>"])
    }
}
