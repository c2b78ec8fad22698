import XCTest
import RTDBData
import RTDBProtocol
import RTDBClient
@testable import RTDBShell

final class ParserTests: XCTestCase {
    func parse(_ line: String, cwd: Path = .root) throws -> Command? {
        try CommandParser.parse(line, cwd: cwd)?.command
    }

    func error(_ line: String, cwd: Path = .root) -> ShellError? {
        do { _ = try CommandParser.parse(line, cwd: cwd); return nil } catch { return error as? ShellError }
    }

    /// A script's lines lose the spaces around them, Unicode's included; the usual line,
    /// with none, is given back as it is.
    func testScriptLinesAreTrimmed() {
        XCTAssertEqual(BatchRunner.trimmed("set /a 1"), "set /a 1")
        XCTAssertEqual(BatchRunner.trimmed("  set /a 1\t"), "set /a 1")
        XCTAssertEqual(BatchRunner.trimmed("\u{3000}set /a \"é\"\u{00A0}"), "set /a \"é\"")
        XCTAssertEqual(BatchRunner.trimmed("set /a \"é\""), "set /a \"é\"")
        XCTAssertEqual(BatchRunner.trimmed("é"), "é")
        XCTAssertEqual(BatchRunner.trimmed(" \t "), "")
        XCTAssertEqual(BatchRunner.trimmed(""), "")
    }

    func testTokenizerKeepsJSONWhole() throws {
        let tokens = try Tokenizer.tokenize(#"set /a {"x": [1, "a b"], "y": "}"} --priority 'two words'"#)
        XCTAssertEqual(tokens.map(\.text), ["set", "/a", #"{"x": [1, "a b"], "y": "}"}"#, "--priority", "'two words'"])
        XCTAssertEqual(tokens.map(\.column), [0, 4, 7, 35, 46])
        XCTAssertEqual(tokens[4].unquoted, "two words")
    }

    func testTokenizerErrors() {
        XCTAssertEqual(error(#"set /a {"x": 1"#), ShellError("unbalanced '{': the JSON value is not closed", column: 7, unfinished: true))
        XCTAssertEqual(error(#"set /a "abc"#), ShellError("unterminated double quote", column: 7, unfinished: true))
        XCTAssertEqual(error("set /a 'abc"), ShellError("unterminated single quote", column: 7, unfinished: true))
        XCTAssertTrue(Tokenizer.isUnfinished(#"set /a {"x": [1"#))
        XCTAssertFalse(Tokenizer.isUnfinished(#"set /a {"x": 1}}"#))
        XCTAssertFalse(Tokenizer.isUnfinished("set /a 1"))
    }

    func testValues() throws {
        XCTAssertEqual(try parse("set /a 5"), .set(Path("a"), Node(5)))
        XCTAssertEqual(try parse("set /a -5.5"), .set(Path("a"), Node(-5.5)))
        XCTAssertEqual(try parse("set /a true"), .set(Path("a"), Node(true)))
        XCTAssertEqual(try parse("set /a hello"), .set(Path("a"), Node("hello")))
        XCTAssertEqual(try parse(#"set /a "5""#), .set(Path("a"), Node("5")))
        XCTAssertEqual(try parse("set /a 'two words'"), .set(Path("a"), Node("two words")))
        XCTAssertEqual(try parse("set /a null"), .set(Path("a"), .empty))
        XCTAssertEqual(try parse("set /a now()"), .set(Path("a"), Node(.serverValue(.timestamp))))
        XCTAssertEqual(try parse("set /a increment(-2)"), .set(Path("a"), Node(.serverValue(.increment(-2)))))
        XCTAssertEqual(try parse("set /a [1,2]"), .set(Path("a"), try JSONReader.parse("[1,2]")))
        XCTAssertEqual(try parse("set /a 1 --priority 3"), .set(Path("a"), Node(.number(1), priority: .number(3))))
        XCTAssertEqual(try parse("set /a 1 --priority=high"), .set(Path("a"), Node(.number(1), priority: .string("high"))))
    }

    /// now() and increment(N) stand wherever a value may, in set, push, update and
    /// ondisconnect; JSON read from elsewhere (files, the network) never has them.
    func testServerValueShorthandsInsideValues() throws {
        let stamp = Node(.serverValue(.timestamp))
        let message = Node.empty.updatingChild(ChildKey("text"), Node("hello")).updatingChild(ChildKey("at"), stamp)
        XCTAssertEqual(try parse(#"push /messages {"text": "hello", "at": now()}"#), .push(Path("messages"), message))
        let nested = Node.empty.updatingChild(ChildKey("a"), Node.empty.updatingChild(ChildKey("n"), Node(.serverValue(.increment(2.5)))))
        XCTAssertEqual(try parse(#"set /x {"a": {"n": increment( 2.5 )}}"#), .set(Path("x"), nested))
        XCTAssertEqual(try parse("set /x [now(), 1]"), .set(Path("x"), Node.empty.updatingChild(ChildKey("0"), stamp).updatingChild(ChildKey("1"), Node(1))))
        XCTAssertEqual(try parse(#"update /u {"seen": now(), "visits": increment(1)}"#),
                       .update(Path("u"), [UpdateEntry(Path("seen"), stamp), UpdateEntry(Path("visits"), Node(.serverValue(.increment(1))))]))
        XCTAssertEqual(try parse(#"ondisconnect /s set {"state": "away", "at": now()}"#),
                       .onDisconnect(.set(Path("s"), Node.empty.updatingChild(ChildKey("state"), Node("away")).updatingChild(ChildKey("at"), stamp))))
        XCTAssertThrowsError(try JSONReader.parse(#"{"at": now()}"#))
    }

    func testSleepDurations() throws {
        XCTAssertEqual(try parse("sleep 500ms"), .sleep(seconds: 0.5))
        XCTAssertEqual(try parse("sleep 2"), .sleep(seconds: 2))
        XCTAssertEqual(try parse("sleep 2s"), .sleep(seconds: 2))
        XCTAssertEqual(try parse("sleep 1.5m"), .sleep(seconds: 90))
        XCTAssertEqual(try parse("sleep 1h"), .sleep(seconds: 3600))
        for bad in ["-1", "2d", "1e3", "25h", "inf", "nan", "1..5s", "ms"] {
            XCTAssertEqual(error("sleep \(bad)"), ShellError("'\(bad)' is not a duration: use 500ms, 2s, 1.5m or 1h (at most a day)", column: 6), bad)
        }
        XCTAssertEqual(error("sleep")?.message, "sleep needs a duration, as in sleep 500ms: usage: sleep DURATION")
    }

    /// `repeat`: its own count and --every, then a whole command line of its own, parsed
    /// with its columns; commands that do not end by themselves refused.
    func testRepeatWrapsACommand() throws {
        let get = ParsedLine(command: .get(QuerySpec(path: Path("n"), params: QueryParams().limitToFirst(1)), shallow: false, export: false), format: .json)
        XCTAssertEqual(try CommandParser.parse("repeat 3 --every 500ms get /n --limitToFirst 1 --json", cwd: .root)?.command,
                       .repeating(RepeatRequest(count: 3, every: 0.5, command: get, text: "get /n --limitToFirst 1 --json")))
        XCTAssertEqual(try parse("repeat get /n --limitToFirst 1 --json"),
                       .repeating(RepeatRequest(count: nil, every: 2, command: get, text: "get /n --limitToFirst 1 --json")))
        XCTAssertEqual(try parse("repeat --json get /n --limitToFirst 1"),
                       .repeating(RepeatRequest(count: nil, every: 2, command: get, text: "get /n --limitToFirst 1")))
        XCTAssertEqual(error("repeat 0 get /n"), ShellError("COUNT is how many runs, a whole number from 1 on, as in repeat 3 get /x", column: 7))
        XCTAssertEqual(error("repeat 99999999999999999999 get /n"), ShellError("COUNT is how many runs, a whole number from 1 on, as in repeat 3 get /x", column: 7))
        XCTAssertEqual(error("repeat 2 3 get /n"), ShellError("unexpected argument '3': usage: repeat [COUNT] [--every DURATION] COMMAND", column: 9))
        XCTAssertEqual(error("repeat 2"), ShellError("repeat needs a command to run: usage: repeat [COUNT] [--every DURATION] COMMAND", column: 6))
        XCTAssertEqual(error("repeat --every 2x get /"), ShellError("'2x' is not a duration: use 500ms, 2s, 1.5m or 1h (at most a day)", column: 15))
        XCTAssertEqual(error("repeat get /n --every 1s"), ShellError("unknown flag '--every' for get (see 'help get'); repeat's own --every comes before the command", column: 14))
        XCTAssertEqual(error("repeat 2 gte /n")?.column, 9)
        for (line, name) in [("repeat watch /n", "watch"), ("repeat query /n --watch", "query --watch"), ("repeat repeat get /n", "repeat"),
                             ("repeat monitor", "monitor"), ("repeat edit /n", "edit"), ("repeat exit", "exit")] {
            XCTAssertEqual(error(line), ShellError("\(name) cannot be repeated: it does not end by itself or asks for input", column: 7), line)
        }
    }

    func testValueErrorsPointIntoTheJSON() {
        XCTAssertEqual(error(#"set /a {"x": }"#), ShellError("expected a value, found '}'", column: 13))
        XCTAssertEqual(error(#"set /a {"é": 1,}"#), ShellError("expected a key in double quotes, found '}'", column: 15))
        XCTAssertEqual(error("set /a NaN"), ShellError("NaN is not a valid value: numbers must be finite", column: 7))
        XCTAssertEqual(error("set /a 1e999")?.message, "number 1e999 is out of range: numbers must be finite doubles")
        XCTAssertEqual(error("set /a 12abc")?.column, 9)
        XCTAssertEqual(error("set /a increment(x)"), ShellError("increment needs a number, as in increment(1)", column: 17))
        XCTAssertEqual(error(#"set /a {"at": now(1)}"#), ShellError("expected ')': now() takes nothing, found '1'", column: 18))
        XCTAssertEqual(error(#"set /a {"at": nowish}"#), ShellError("expected '(' after now, as in now()", column: 17))
        XCTAssertEqual(error(#"set /a {"n": increment(1}"#), ShellError("expected ')' after the number of increment(N), found '}'", column: 24))
        XCTAssertEqual(error(#"set /a {"b.c": 1}"#)?.column, 8)
        XCTAssertEqual(error("set /a 1 --priority true"), ShellError("a priority must be a number, a string or null", column: 20))
    }

    func testPathsResolveAgainstTheCurrentPath() throws {
        let cwd = Path("users/ada")
        XCTAssertEqual(try parse("get name", cwd: cwd), .get(QuerySpec(path: Path("users/ada/name")), shallow: false, export: false))
        XCTAssertEqual(try parse("get ../bob/./name", cwd: cwd), .get(QuerySpec(path: Path("users/bob/name")), shallow: false, export: false))
        XCTAssertEqual(try parse("get /x", cwd: cwd), .get(QuerySpec(path: Path("x")), shallow: false, export: false))
        XCTAssertEqual(try parse("get", cwd: cwd), .get(QuerySpec(path: cwd), shallow: false, export: false))
        XCTAssertEqual(try parse("cd ../../..", cwd: cwd), .cd(.root))
        XCTAssertEqual(try parse("cd", cwd: cwd), .cd(.root))
        XCTAssertEqual(try parse(#"get "/a b/c""#), .get(QuerySpec(path: Path(keys: ["a b", "c"])), shallow: false, export: false))
    }

    func testPathErrors() {
        XCTAssertEqual(error("get /users/a#b"),
                       ShellError(##"invalid key "a#b" in "/users/a#b": keys must not contain ".", "$", "#", "[", "]" or "/" (found "#")"##, column: 4))
        XCTAssertEqual(error("set /.info/connected true"),
                       ShellError(#""/.info/connected" is read-only: /.info is maintained by the client"#, column: 4))
        XCTAssertNil(error("get /.info/connected"))
        let deep = "/" + (0..<33).map { "k\($0)" }.joined(separator: "/")
        XCTAssertTrue(error("set \(deep) 1")!.message.contains("33 levels deep; the limit is 32"))
        XCTAssertTrue(error("set /\(String(repeating: "a", count: 800)) 1")!.message.contains("800 bytes long; the limit is 768"))
    }

    func testCommandAndFlagErrorsSuggest() {
        XCTAssertEqual(error("sett /a 1"), ShellError("unknown command 'sett'; did you mean 'set'? (type 'help' for the list)", column: 0))
        XCTAssertEqual(error("get /a --shalow"), ShellError("unknown flag '--shalow' for get; did you mean '--shallow'? (see 'help get')", column: 7))
        XCTAssertEqual(error("set /a"), ShellError("set needs a path and a value: usage: set PATH VALUE [--priority P]", column: 3))
        XCTAssertEqual(error("set /a Ada Lovelace"),
                       ShellError(#"unexpected argument 'Lovelace': usage: set PATH VALUE [--priority P] (quote a value with spaces: "two words")"#, column: 11))
        XCTAssertEqual(error("set /a 1 --priority"), ShellError("--priority needs a value (P)", column: 9))
        XCTAssertEqual(error("get --shallow --shallow"), ShellError("--shallow is given twice", column: 14))
        XCTAssertEqual(error("help sett"), ShellError("no help for 'sett': not a command; did you mean 'set'?", column: 5))
    }

    func testUpdate() throws {
        guard case .update(let path, let updates)? = try parse(#"update /u {"a/b": 1, "c": null}"#) else { return XCTFail() }
        XCTAssertEqual(path, Path("u"))
        XCTAssertEqual(updates, [UpdateEntry(Path("a/b"), Node(1)), UpdateEntry(Path("c"), .empty)])
        XCTAssertEqual(error(#"update /u {"a": 1, "a/b": 2}"#)?.message,
                       #"invalid value at "/u/a/b": update paths "a" and "a/b" overlap: one contains the other"#)
        XCTAssertEqual(error("update /u 5")?.message, #"update needs a JSON object of paths to values, as in {"name": "Ada", "address/city": "London"}"#)
    }

    func testFilesAsValues() throws {
        let folder = NSTemporaryDirectory() + "rtdb-parser-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{"a": [1, 2]}"#.write(toFile: folder + "/ok.json", atomically: true, encoding: .utf8)
        try "{\n  \"a\": 1,\n  \"b\": \n}".write(toFile: folder + "/bad.json", atomically: true, encoding: .utf8)
        XCTAssertEqual(try parse("set /x @\(folder)/ok.json"), .set(Path("x"), try JSONReader.parse(#"{"a": [1, 2]}"#)))
        XCTAssertEqual(error("set /x @\(folder)/bad.json")?.message, "\(folder)/bad.json:4:1: expected a value, found '}'")
        XCTAssertEqual(error("set /x @\(folder)/missing.json")?.message, "cannot read \(folder)/missing.json: no such file")
        XCTAssertEqual(error("set /x @\(folder)")?.message, "cannot read \(folder): it is a folder")
        try "x".write(toFile: folder + "/secret.json", atomically: true, encoding: .utf8)
        chmod(folder + "/secret.json", 0)
        if getuid() != 0 {  // root reads anything
            XCTAssertEqual(error("set /x @\(folder)/secret.json")?.message, "cannot read \(folder)/secret.json: permission denied or unreadable")
        }
    }

    func testTooLargeValuesAreRefusedWhole() {
        let big = "\"" + String(repeating: "a", count: 20 * 1024 * 1024) + "\""
        XCTAssertEqual(error("set /a \(big)")?.message, "the write is 20971522 bytes; the limit is 16777216")
        let string11 = "\"" + String(repeating: "a", count: 11 * 1024 * 1024) + "\""
        XCTAssertTrue(error("set /a \(string11)")!.message.contains("the limit is 10485760 (10 MiB)"))
    }
}
