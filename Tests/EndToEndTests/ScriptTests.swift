import Foundation
import XCTest
import RTDBShell

/// Piped scripts, -c and one-shot commands, compared byte for byte.
final class ScriptTests: XCTestCase {
    var folder: String!

    override func setUp() { folder = Binary.temporaryFolder() }

    func rtdb(_ args: [String], input: String? = nil, timeout: TimeInterval? = nil) throws -> Binary.Result {
        try Binary.run(["--data", folder] + args, input: input, timeout: timeout)
    }

    /// With RTDB_STAGE_TIMES set, a run ends with where its time went, on standard error (the
    /// benchmarks' per-stage figures); its output is what it is without.
    func testStageTimesAreReportedOnlyWhenAsked() throws {
        let script = (0..<50).map { "set /s/k\($0) \($0)" }.joined(separator: "\n") + "\nget /s/k7\n"
        let plain = try rtdb([], input: script)
        XCTAssertEqual(plain.status, 0)
        XCTAssertEqual(plain.stderr, "")
        // Set but empty is off, as for the program's other variables.
        let empty = try Binary.run(["--data", Binary.temporaryFolder()], input: script, environment: ["RTDB_STAGE_TIMES": ""])
        XCTAssertEqual(empty.stderr, "")
        let timed = try Binary.run(["--data", Binary.temporaryFolder()], input: script, environment: ["RTDB_STAGE_TIMES": "1"])
        XCTAssertEqual(timed.status, 0)
        XCTAssertEqual(timed.stdout, plain.stdout)
        let lines = timed.stderr.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.hasPrefix("stages: rtdb: wall ") == true, timed.stderr)
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("stages: ") }, timed.stderr)
        // Each line is one place, with the stages that ran there and how many times.
        func line(_ place: String) -> String { lines.first { $0.hasPrefix("stages:   \(place): ") } ?? "" }
        XCTAssertTrue(line("main thread, all of it").contains("s of CPU"), timed.stderr)
        XCTAssertTrue(line("main actor").contains("parse "), timed.stderr)
        XCTAssertTrue(line("main actor").contains("(51, "), timed.stderr)
        XCTAssertTrue(line("client core queue").contains("apply "), timed.stderr)
        XCTAssertTrue(line("client core queue").contains("(50, "), timed.stderr)
        XCTAssertTrue(line("client core queue").contains("acknowledge "), timed.stderr)
        XCTAssertTrue(line("database queue").contains("engine "), timed.stderr)
        XCTAssertTrue(line("committer").contains("log write "), timed.stderr)
        XCTAssertTrue(line("committer").contains("log sync "), timed.stderr)
    }

    func testPipedScript() throws {
        let script = """
        # seed some users
        set /users/ada {"name": "Ada", "born": 1815}
        set /users/bob {"name": "Bob", "tags": ["x", "y"]}

        cd /users
        update ada {"born": 1816, "address/city": "London"}
        ls
        get ada
        get bob/tags
        pwd
        rm bob
        get /
        """
        let result = try rtdb([], input: script)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(result.stdout, """
        ["ada","bob"]
        {"address":{"city":"London"},"born":1816,"name":"Ada"}
        ["x","y"]
        /users
        {"users":{"ada":{"address":{"city":"London"},"born":1816,"name":"Ada"}}}

        """)
        XCTAssertEqual(result.status, 0)
    }

    func testErrorStopsTheScriptWithLineAndColumn() throws {
        let script = "set /a 1\nset /b {\"x\": tru}\nset /c 3\n"
        let result = try rtdb([], input: script)
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, """
        error: line 2, column 14: expected a value, found 't'
          set /b {"x": tru}
                       ^

        """)
        XCTAssertEqual(try rtdb(["get", "/", "--json"]).stdout, #"{"a":1}"# + "\n", "line 3 did not run; line 1 is durable")
    }

    /// Longer than the lines read ahead (4,096): every line runs, in order, and an error
    /// still names its own line; the lines after it do not run.
    func testAScriptLongerThanTheReadAheadRunsWholeAndInOrder() throws {
        var lines = (0..<9_000).map { "set /n/k\($0) \($0)" }
        lines += ["get /n/k8999", "set /n/k0 {", "set /after 1"]
        // A reader left waiting for room would hang the script: stopped after a minute.
        let result = try rtdb([], input: lines.joined(separator: "\n") + "\n", timeout: 60)
        XCTAssertEqual(result.stdout, "8999\n")
        XCTAssertEqual(result.stderr.split(separator: "\n").first, "error: line 9002, column 11: unbalanced '{': the JSON value is not closed")
        XCTAssertEqual(result.status, 1)
        let keys = try rtdb(["get", "/n", "--shallow", "--json"]).stdout
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(keys.utf8)) as? [String: Bool], Dictionary(uniqueKeysWithValues: (0..<9_000).map { ("k\($0)", true) }))
        XCTAssertEqual(try rtdb(["get", "/after"]).stdout, "null\n")
    }

    func testKeepGoingRunsTheRestAndStillFails() throws {
        let result = try rtdb(["--keep-going"], input: "set /a 1\nbogus\nset /c 3\n")
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, """
        error: line 2, column 1: unknown command 'bogus' (type 'help' for the list)
          bogus
          ^

        """)
        XCTAssertEqual(try rtdb(["get", "/"]).stdout, #"{"a":1,"c":3}"# + "\n")
    }

    func testDashCAndOneShot() throws {
        let result = try rtdb(["-c", "set /n 41", "-c", "set /n increment(1)", "-c", "get /n"])
        XCTAssertEqual(result.stdout, "42\n")
        XCTAssertEqual(result.status, 0)
        let oneShot = try rtdb(["get", "/n", "--json"])
        XCTAssertEqual(oneShot.stdout, "42\n")
        let push = try rtdb(["push", "/list", #"{"a": 1}"#])
        XCTAssertEqual(push.stdout.count, 21)
        let bad = try rtdb(["-c", "get /a..b"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.hasPrefix(#"error: -c 1, column 5: invalid key "a..b""#), bad.stderr)
    }

    func testBadInputNeverWritesPartOfACommand() throws {
        let inputs = [
            "set /a/b.c 1", "set /a {\"ok\": 1, \"bad.key\": 2}", "update / {\"a\": 1, \"b\": {\"c$\": 1}}",
            "set /.info/x 1", "set /a NaN", "set /a @/nonexistent/file.json",
            "set /" + (0..<40).map(String.init).joined(separator: "/") + " 1",
        ]
        for input in inputs {
            let result = try rtdb(["--keep-going"], input: input + "\n")
            XCTAssertEqual(result.status, 1, input)
            XCTAssertTrue(result.stderr.hasPrefix("error: line 1, column "), "\(input): \(result.stderr)")
        }
        XCTAssertEqual(try rtdb(["get", "/"]).stdout, "null\n")
    }

    /// --json and --no-color before the command, after it, with -c and for a whole script.
    func testOutputFlagsWorkOnEitherSideOfTheCommand() throws {
        for args in [["--json", "pwd"], ["pwd", "--json"], ["--json", "-c", "pwd"], ["--json", "--no-color", "pwd"], ["pwd", "--no-color", "--json"]] {
            let result = try rtdb(args)
            XCTAssertEqual(result.status, 0, "\(args): \(result.stderr)")
            XCTAssertEqual(result.stdout, "\"/\"\n", "\(args)")
        }
        let script = try rtdb(["--json"], input: "pwd\ncd /a\npwd\n")
        XCTAssertEqual(script.stdout, "\"/\"\n\"/a\"\n")
        let plain = try rtdb(["pwd", "--no-color"])
        XCTAssertEqual(plain.stdout, "/\n")
    }

    /// `--format` before the command holds for every line, as `--json` does; after it, for
    /// that command. A format that is none, or one beside --json, is a usage error.
    func testFormatOnEitherSideOfTheCommand() throws {
        XCTAssertEqual(try rtdb(["set", "/n", #"{"a": {"x": 1}, "b": {"x": 2, "y": "z"}}"#]).status, 0)
        let csv = ".key,x,y\r\na,1,\r\nb,2,z\r\n"
        XCTAssertEqual(try rtdb(["--format", "csv", "get", "/n"]).stdout, csv)
        XCTAssertEqual(try rtdb(["get", "/n", "--format", "csv"]).stdout, csv)
        XCTAssertEqual(try rtdb(["--format", "tsv"], input: "get /n\nget /n/b/x --format ndjson\n").stdout, ".key\tx\ty\na\t1\t\nb\t2\tz\n2\n")
        let bad = try rtdb(["--format", "xml", "get", "/n"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.hasPrefix("Error: --format 'xml' is not a format: use json, ndjson, table, csv, tsv\nUsage: rtdb"), bad.stderr)
        let both = try rtdb(["--json", "--format", "csv", "get", "/n"])
        XCTAssertEqual(both.status, 2)
        XCTAssertTrue(both.stderr.hasPrefix("Error: --json is --format json: give one format\n"), both.stderr)
        XCTAssertEqual(try rtdb(["--json", "--format", "json", "get", "/n/a"]).stdout, #"{"x":1}"# + "\n")
    }

    /// At a terminal, errors are red unless the line says --no-color (or --json), on either
    /// side of the command, and also when the line cannot be parsed.
    func testNoColorAfterTheCommandReachesItsErrors() throws {
        XCTAssertEqual(try rtdb(["set", "/v", "1"]).status, 0)
        let red = "\u{1B}[31merror:\u{1B}[0m "
        for (line, colored) in [("ls /v", true), ("ls /v --no-color", false), ("ls /v --json", false),
                                ("get /v --bogus", true), ("get /v --no-color --bogus", false)] {
            let (status, text) = try Binary.terminal("'\(Binary.path)' --data '\(folder!)' \(line)", input: "", environment: ["NO_COLOR": nil])
            XCTAssertEqual(status, 1, "\(line): \(text)")
            XCTAssertEqual(text.contains(red), colored, "\(line): \(text)")
            XCTAssertTrue(text.contains("error:"), "\(line): \(text)")
        }
    }

    func testVersion() throws {
        let result = try Binary.run(["--version"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("rtdb 0.10.0 ("), result.stdout)
        XCTAssertTrue(result.stdout.hasSuffix(" build, Swift 6.3, Linux x86_64)\n"), result.stdout)
    }

    /// A watch whose output nobody reads (a pipe that filled; its errors into the same pipe,
    /// or not) still ends on SIGTERM, failing, and every write it acknowledged is there.
    func testSIGTERMEndsAWatchBlockedOnItsOutput() throws {
        try watchBlockedOnItsOutput(errorsToo: false)
        try watchBlockedOnItsOutput(errorsToo: true)
    }

    func watchBlockedOnItsOutput(errorsToo: Bool) throws {
        let folder = Binary.temporaryFolder()
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: Binary.path)
        watcher.arguments = ["--data", folder, "watch", "/w", "--json"]
        let unread = Pipe()
        watcher.standardOutput = unread
        watcher.standardError = errorsToo ? unread : FileHandle.nullDevice
        try watcher.run()
        defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: folder + "/socket") && Date() < deadline { usleep(20_000) }
        // Events of about 150 bytes each: far more than a pipe holds.
        let writes = (0..<2000).map { #"set /w/k\#($0) "\#(String(repeating: "x", count: 100))""# }.joined(separator: "\n") + "\n"
        let written = try Binary.run(["--data", folder], input: writes)
        XCTAssertEqual(written.status, 0, written.stderr)
        usleep(500_000)
        kill(watcher.processIdentifier, SIGTERM)
        let ended = Date().addingTimeInterval(30)
        while watcher.isRunning && Date() < ended { usleep(20_000) }
        XCTAssertFalse(watcher.isRunning, "the watch did not end on SIGTERM")
        if !watcher.isRunning { XCTAssertEqual(watcher.terminationStatus, 1) }
        let count = try Binary.run(["--data", folder, "-c", "get /w --shallow --json"])
        XCTAssertEqual(count.stdout.split(separator: ",").count, 2000, count.stderr)
    }

    /// `sleep` waits in a script (a second writer's value is there after it).
    func testSleepInAScript() throws {
        let result = try rtdb([], input: "sleep 300ms\nsleep 0.1\nsleep 2d\n")
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, """
        error: line 3, column 7: '2d' is not a duration: use 500ms, 2s, 1.5m or 1h (at most a day)
          sleep 2d
                ^

        """)
    }

    /// A background watch in a script: its events are lines of the output, in order with
    /// the other commands', until unwatch or the script's end.
    func testBackgroundWatchesInAScript() throws {
        let result = try rtdb([], input: """
        set /notes/a 1
        watch /notes --events child_added,child_changed --bg
        set /notes/b 2
        get /notes
        set /notes/a 3
        unwatch 1
        set /notes/c 4
        watch /notes/c --bg
        set /notes/c 5
        unwatch 2
        watch /log --events child_added --bg
        push /log 6

        """)
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map { line -> String in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return String(line) }
            if let event = object["event"] as? String {
                let data = try? JSONSerialization.data(withJSONObject: object["data"] ?? NSNull(), options: [.fragmentsAllowed])
                return "\(object["watch"] ?? "?") \(event) \(object["key"] as? String ?? "-") \(data.map { String(decoding: $0, as: UTF8.self) } ?? "")"
            }
            return String(line)
        }
        XCTAssertEqual(lines, [
            #"{"watch":1}"#, "1 child_added a 1", "1 child_added b 2", #"{"a":1,"b":2}"#, "1 child_changed a 3",
            #"{"watch":2}"#, "2 value - 4", "2 value - 5", #"{"watch":3}"#,
            // The push's key comes after the event it raised.
            "3 child_added \(lines.last ?? "") 6", lines.last ?? "",
        ])
        XCTAssertEqual(lines.last?.count, 20)
    }

    /// A write just before unwatch that moves a child into a watched window: the client
    /// learns the child's whole value only from the server's answer, and unwatch waits for it.
    func testUnwatchInAScriptComesAfterThePrecedingWritesEvents() throws {
        for _ in 0..<5 {
            // Written by a run of its own: written in the same script, the write's own data
            // would let this client place the child itself, and that write's acknowledgement,
            // if it came after the next write was applied locally, would rightly take the
            // child out and put it back (as Firebase's clients do).
            XCTAssertEqual(try rtdb([], input: #"set /scores {"a": {"s": 5}, "b": {"s": 7}, "c": {"s": 9}}"# + "\n").status, 0)
            let result = try rtdb([], input: """
            watch /scores --orderByChild s --limitToLast 2 --events child_added --bg
            set /scores/a/s 12
            unwatch 1

            """)
            XCTAssertEqual(result.status, 0, result.stderr)
            let keys = result.stdout.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["key"] as? String
            }
            XCTAssertEqual(keys, ["b", "c", "a"])
        }
    }

    /// get with query flags: one object, its keys in query order (here not key order).
    func testGetWithQueryFlagsKeepsTheQueryOrder() throws {
        let result = try rtdb([], input: """
        set /notes {"n1": {"at": 60}, "n2": {"at": 50}, "n3": {"at": 10}, "n4": {"at": 55}}
        get /notes --orderByChild at --limitToLast 3
        get /notes --orderByChild at --limitToLast 3 --shallow
        get /notes --orderByKey --startAt n4
        get /notes --orderByChild at --equalTo 7

        """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, """
        {"n2":{"at":50},"n4":{"at":55},"n1":{"at":60}}
        {"n2":true,"n4":true,"n1":true}
        {"n4":{"at":55}}
        null

        """)
    }

    /// --timing and 'timing on|off': a line per command on stderr, the output unchanged.
    func testTiming() throws {
        let result = try rtdb(["--timing"], input: "set /a 1\nget /a\ntiming off\nget /a\ntiming\npwd\n")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "1\n1\n/\n")
        let shape = result.stderr.replacingOccurrences(of: #"Time: \d+\.\d{3} ms"#, with: "Time: N ms", options: .regularExpression)
        XCTAssertEqual(shape, "Time: N ms\nTime: N ms\ntiming is off\ntiming is on\nTime: N ms\n")
    }

    /// scripts/install puts the binary, man page and completions where tools look for them.
    func testInstallScript() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let prefix = Binary.temporaryFolder()
        let install = Process()
        install.executableURL = URL(fileURLWithPath: root + "/scripts/install")
        install.arguments = ["--prefix", prefix, "--binary", Binary.path]
        let out = Pipe()
        install.standardOutput = out
        try install.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        install.waitUntilExit()
        XCTAssertEqual(install.terminationStatus, 0, text)
        XCTAssertTrue(text.hasPrefix("installed rtdb 0.10.0 ("), text)
        for (file, source) in [("share/man/man1/rtdb.1", "man/rtdb.1"), ("share/bash-completion/completions/rtdb", "completions/rtdb.bash"),
                               ("share/zsh/site-functions/_rtdb", "completions/_rtdb"), ("share/fish/vendor_completions.d/rtdb.fish", "completions/rtdb.fish")] {
            XCTAssertEqual(FileManager.default.contents(atPath: prefix + "/" + file), FileManager.default.contents(atPath: root + "/" + source), file)
        }
        let version = try Binary.run(["--version"])
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: prefix + "/bin/rtdb"))
        XCTAssertTrue(text.contains(version.stdout.trimmingCharacters(in: .newlines)), text)
    }

    /// tree and du through the binary: the shape, and where the bytes are.
    func testTreeAndDu() throws {
        let result = try rtdb([], input: """
        set /users {"ada": {"name": "Ada", "langs": ["en", "fr"]}, "bob": {"name": "Bob"}}
        set /log {"a": "x"}
        tree /users
        du --json
        du /users --depth 2

        """)
        XCTAssertEqual(result.status, 0, result.stderr)
        // {"ada":{"langs":["en","fr"],"name":"Ada"},"bob":{"name":"Bob"}} is 63 bytes.
        XCTAssertEqual(result.stdout, """
        /users  {2 children}
        ├── ada  {2 children}
        │   ├── langs  {2 children}
        │   └── name  "Ada"
        └── bob  {1 child}
            └── name  "Bob"
        [{"path":"/","bytes":89},{"path":"/users","bytes":63},{"path":"/log","bytes":9}]
        63 B  /users
        34 B  /users/ada
        14 B  /users/bob
        11 B  /users/ada/langs
         5 B  /users/ada/name
         5 B  /users/bob/name

        """)
    }

    /// A value left open goes on over the next lines, in a script as at the terminal; an
    /// error in it names the line it is on.
    func testMultiLineValues() throws {
        let result = try rtdb(["--keep-going"], input: """
        set /a {
          "x": 1,
          "y": [1,
                2]
        }
        get /a
        set /b 'two
        lines'
        get /b
        set /c {"x":
          tru}

        """)
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stdout, #"{"x":1,"y":[1,2]}"# + "\n" + #""two\nlines""# + "\n")
        XCTAssertEqual(result.stderr, """
        error: line 11, column 3: expected a value, found 't'
            tru}
            ^

        """)
    }

    /// At a terminal (a pty from script(1)): ~/.rtdbrc runs first, its errors named by file
    /// and line; an open value continues at a "...>" prompt.
    func testStartupFileAndContinuationPromptAtATerminal() throws {
        let home = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try Data("set /fromrc 1\nbogus\n".utf8).write(to: URL(fileURLWithPath: home + "/.rtdbrc"))
        let (status, text) = try Binary.terminal("'\(Binary.path)' --data '\(folder!)' --no-color",
                                                 input: "get /fromrc\nset /m {\n\"a\": 1}\nget /m --json\nexit\n",
                                                 environment: ["HOME": home, "RTDB_RC": nil])
        XCTAssertEqual(status, 0, text)
        for expected in ["error: ~/.rtdbrc line 2, column 1: unknown command 'bogus'", "rtdb:/> get /fromrc\n1\n",
                         "rtdb:/> set /m {\n   ...> \"a\": 1}\n", "rtdb:/> get /m --json\n{\"a\":1}\n"] {
            XCTAssertTrue(text.contains(expected), "missing \(expected) in:\n\(text)")
        }
    }

    /// At a terminal, text that is not ASCII is typed as it is (libedit dropped it in the
    /// default "C" locale), in any locale the user has.
    func testNonASCIITypedAtATerminal() throws {
        for locale in ["C", "C.UTF-8"] {
            let (status, text) = try Binary.terminal("'\(Binary.path)' --data '\(folder!)' --no-color",
                                                     input: "set /t {\"é\": \"日本 €1 😀\"}\nget /t --json\nexit\n",
                                                     environment: ["LANG": locale, "LC_ALL": locale])
            XCTAssertEqual(status, 0, text)
            XCTAssertTrue(text.contains("rtdb:/> get /t --json\n{\"é\":\"日本 €1 😀\"}\n"), "\(locale):\n\(text)")
        }
    }

    /// At a terminal 8 rows tall (a pty from script(1)), output taller than it goes through
    /// $PAGER; short output, 'pager off' and --no-pager print straight.
    func testPagerAtATerminal() throws {
        _ = try rtdb(["set", "/big", #"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}"#])
        func session(_ options: String, _ input: String) throws -> String {
            try Binary.terminal("stty rows 8 cols 80; '\(Binary.path)' --data '\(folder!)' --no-color \(options)",
                                input: input, environment: ["PAGER": "sed s/^/P:/"]).text
        }
        let paged = try session("", "ls /big\nget /big/a\npager off\nls /big\nexit\n")
        XCTAssertTrue(paged.contains("rtdb:/> ls /big\nP:a\nP:b\n"), paged)
        XCTAssertTrue(paged.contains("P:j\n"), paged)
        XCTAssertTrue(paged.contains("rtdb:/> get /big/a\n1\n"), paged)
        XCTAssertTrue(paged.contains("the pager is off\n"), paged)
        XCTAssertTrue(paged.contains("rtdb:/> ls /big\na\nb\n"), paged)
        let straight = try session("--no-pager", "ls /big\nexit\n")
        XCTAssertFalse(straight.contains("P:"), straight)
        let script = try rtdb([], input: "pager off\n")
        XCTAssertEqual(script.stderr, "error: line 1: there is no pager here: output is not a terminal, or --no-pager was given\n")
    }

    /// edit with a scripted EDITOR: saved unchanged, changed, invalid JSON; and, against a
    /// server, a value another client changed while it was open.
    func testEditWritesBackOnlyWhatWasOpened() throws {
        _ = try rtdb(["set", "/users/ada", #"{"name": "Ada", "born": 1815}"#])
        let unchanged = try Binary.run(["--data", folder, "edit", "/users/ada"], environment: ["EDITOR": "true", "VISUAL": ""])
        XCTAssertEqual(unchanged.status, 0)
        XCTAssertEqual(unchanged.stderr, "unchanged: nothing written\n")
        let changed = try Binary.run(["--data", folder, "edit", "/users/ada"], environment: ["EDITOR": "sed -i s/1815/1816/", "VISUAL": ""])
        XCTAssertEqual(changed.status, 0, changed.stderr)
        XCTAssertEqual(changed.stderr, "written\n")
        let invalid = try Binary.run(["--data", folder, "edit", "/users/ada"], environment: ["VISUAL": "sed -i s/1816/18x16/"])
        XCTAssertEqual(invalid.status, 1)
        XCTAssertEqual(invalid.stderr, "error: not written: line 2, column 13 of the edited value: expected ',' or '}' in object, found 'x'\n")
        XCTAssertEqual(try rtdb(["get", "/users/ada"]).stdout, #"{"born":1816,"name":"Ada"}"# + "\n")

        let (server, port) = try Binary.startServer(folder: Binary.temporaryFolder())
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let url = "ws://127.0.0.1:\(port)?ns=edit"
        XCTAssertEqual(try Binary.run(["--url", url, "set", "/users/ada", #"{"name": "Ada", "born": 1815}"#]).status, 0)
        // The "editor" is another client's write, then the user's change (without a disk
        // cache: the editing shell holds this database's).
        let editor = "'\(Binary.path)' --no-persistence --url '\(url)' set /users/ada/born 1900 && sed -i s/Ada/Augusta/"
        let conflict = try Binary.run(["--url", url, "edit", "/users/ada"], environment: ["EDITOR": editor, "VISUAL": ""])
        XCTAssertEqual(conflict.status, 1)
        XCTAssertEqual(conflict.stderr, """
        not written: /users/ada changed since it was opened
          opened: {"born":1815,"name":"Ada"}
          now:    {"born":1900,"name":"Ada"}

        """)
        XCTAssertEqual(try Binary.run(["--url", url, "get", "/users/ada"]).stdout, #"{"born":1900,"name":"Ada"}"# + "\n")
    }

    /// A data folder named on the command line wins over FIREBASE_DATABASE_EMULATOR_HOST (set
    /// for an application's firebase-admin, say): the folder is used, no server is tried.
    func testADataFolderGivenWinsOverTheEmulatorVariable() throws {
        let environment = ["FIREBASE_DATABASE_EMULATOR_HOST": "127.0.0.1:1"]
        let written = try Binary.run(["--data", folder, "-c", "set /a 1", "-c", "get /a"], environment: environment)
        XCTAssertEqual(written.status, 0, written.stderr)
        XCTAssertEqual(written.stdout, "1\n")
        XCTAssertEqual(try rtdb(["get", "/a"]).stdout, "1\n")
    }

    /// An editor that saves text that is not UTF-8 (Latin-1 "café"), or that fails: nothing is
    /// written, and the message says why in words (an exit status, a signal), not a wait status.
    func testEditRefusesTextThatIsNotUTF8AndSaysHowTheEditorEnded() throws {
        _ = try rtdb(["set", "/users/ada", #"{"name": "Ada"}"#])
        let latin1 = Binary.temporaryFolder() + "/latin1-editor"
        try FileManager.default.createDirectory(atPath: (latin1 as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(#"printf '{"name": "caf\351"}\n' > "$1""#.utf8).write(to: URL(fileURLWithPath: latin1))
        let refused = try Binary.run(["--data", folder, "edit", "/users/ada"], environment: ["EDITOR": "sh '\(latin1)'", "VISUAL": ""])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "error: not written: line 1, column 14 of the edited value: byte 0xE9 is not UTF-8 (save the file as UTF-8)\n")
        let failed = try Binary.run(["--data", folder, "edit", "/users/ada"], environment: ["EDITOR": "sh -c 'exit 3'", "VISUAL": ""])
        XCTAssertEqual(failed.status, 1)
        XCTAssertEqual(failed.stderr, "error: the editor 'sh -c 'exit 3'' exited with status 3: nothing written\n")
        let killed = try Binary.run(["--data", folder, "edit", "/users/ada"], environment: ["EDITOR": "kill -9 $$;", "VISUAL": ""])
        XCTAssertEqual(killed.status, 1)
        XCTAssertEqual(killed.stderr, "error: the editor 'kill -9 $$;' was killed by signal 9: nothing written\n")
        XCTAssertEqual(try rtdb(["get", "/users/ada"]).stdout, #"{"name":"Ada"}"# + "\n")
    }

    /// A process that holds the folder's lock but does not serve it (not an rtdb that
    /// shares): a second rtdb says who has it, after waiting --timeout for an answer.
    func testDataFolderInUseByAProcessThatDoesNotAnswer() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("4242\n".utf8).write(to: URL(fileURLWithPath: folder + "/LOCK"))
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        // It says so once it holds the lock.
        holder.arguments = ["--no-fork", "-x", folder + "/LOCK", "sh", "-c", "echo locked; exec sleep 30"]
        let said = Pipe()
        holder.standardOutput = said
        try holder.run()
        defer { holder.terminate(); holder.waitUntilExit() }
        XCTAssertTrue(Drain(said.fileHandleForReading).waitFor("locked"))
        let result = try rtdb(["--timeout", "1s", "get", "/"])
        XCTAssertEqual(result.status, 3)
        XCTAssertEqual(result.stderr, "rtdb: the data folder \(folder!) is in use by another rtdb process (pid 4242), which does not answer on \(folder!)/socket; stop it or choose another folder with --data\n")
    }

    func testHelp() throws {
        for flag in ["--help", "-h"] {
            let result = try rtdb([flag])
            XCTAssertEqual(result.status, 0)
            XCTAssertTrue(result.stdout.hasPrefix("OVERVIEW: An interactive shell for realtime JSON databases."), result.stdout)
            XCTAssertTrue(result.stdout.contains("--data <DIR>"), result.stdout)
        }
    }

    /// `rtdb help [COMMAND]` is the shell's help (no database opened); for a subcommand, its own.
    func testHelpSubcommand() throws {
        let set = try Binary.run(["help", "set"])
        XCTAssertEqual(set.status, 0)
        XCTAssertEqual(set.stdout, Help.command("set"))
        XCTAssertEqual(try Binary.run(["help"]).stdout, Help.overview())
        let serve = try Binary.run(["help", "serve"])
        XCTAssertTrue(serve.stdout.hasPrefix("OVERVIEW: Run the local server"), serve.stdout)
        XCTAssertTrue(serve.stdout.contains("USAGE: rtdb serve [--host <ADDRESS>] [--port <PORT>]"), serve.stdout)
        let unknown = try Binary.run(["help", "sett"])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertEqual(unknown.stderr, "rtdb help: no help for 'sett': not a command; did you mean 'set'?\n")
    }

    func testUsageErrorExitsWithTwo() throws {
        let result = try rtdb(["--no-such-option"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("Unknown option '--no-such-option'"), result.stderr)
    }

    func testHundredsOfWritesAreDurableAtExit() throws {
        let script = (0..<500).map { "set /k/\($0) \($0)" }.joined(separator: "\n")
        XCTAssertEqual(try rtdb([], input: script).status, 0)
        let all = try rtdb(["ls", "/k"])
        XCTAssertEqual(all.stdout.split(separator: ",").count, 500)
    }
}
