import XCTest
import RTDBClient
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBTestSupport
@testable import RTDBShell

/// `--format`: every format of the same results, byte for byte.
final class OutputFormatTests: XCTestCase {
    // Nested values, sparse fields, a leaf among objects, a string that needs quoting.
    let users = try! JSONValue.parse(#"{"ada":{"name":"Ada Lovelace","born":1815,"langs":["en","fr"]},"bob":{"name":"Bob, \"the\" builder","email":"bob@x.io","admin":true},"cyd":42}"#)

    func render(_ format: OutputFormat, _ value: JSONValue, width: Int? = nil, color: Bool = false) -> String {
        format.render(value, width: width, color: color).text
    }

    func testEveryFormatOfNestedAndSparseData() {
        XCTAssertEqual(render(.json, users), #"{"ada":{"name":"Ada Lovelace","born":1815,"langs":["en","fr"]},"bob":{"name":"Bob, \"the\" builder","email":"bob@x.io","admin":true},"cyd":42}"# + "\n")
        XCTAssertEqual(render(.ndjson, users), """
        {"key":"ada","value":{"name":"Ada Lovelace","born":1815,"langs":["en","fr"]}}
        {"key":"bob","value":{"name":"Bob, \\"the\\" builder","email":"bob@x.io","admin":true}}
        {"key":"cyd","value":42}

        """)
        XCTAssertEqual(render(.csv, users),
                       ".key,name,born,langs,email,admin,.value\r\n"
                       + "ada,Ada Lovelace,1815,\"[\"\"en\"\",\"\"fr\"\"]\",,,\r\n"
                       + "bob,\"Bob, \"\"the\"\" builder\",,,bob@x.io,true,\r\n"
                       + "cyd,,,,,,42\r\n")
        XCTAssertEqual(render(.tsv, users), """
        .key\tname\tborn\tlangs\temail\tadmin\t.value
        ada\tAda Lovelace\t1815\t["en","fr"]\t\t\t
        bob\tBob, "the" builder\t\t\tbob@x.io\ttrue\t
        cyd\t\t\t\t\t\t42

        """)
        XCTAssertEqual(render(.table, users), """
        .key  name                born  langs        email     admin  .value
        ────  ──────────────────  ────  ───────────  ────────  ─────  ──────
        ada   Ada Lovelace        1815  ["en","fr"]
        bob   Bob, "the" builder                     bob@x.io  true
        cyd                                                               42
        (3 rows)

        """)
    }

    /// A list's elements are rows without keys; null is no rows at all; a lone value is one
    /// row of `.value`.
    func testListsNullAndLoneValues() throws {
        let sizes = try JSONValue.parse(#"[{"path":"/","bytes":161},{"path":"/users","bytes":129}]"#)
        XCTAssertEqual(render(.table, sizes), "path    bytes\n──────  ─────\n/         161\n/users    129\n(2 rows)\n")
        XCTAssertEqual(render(.csv, sizes), "path,bytes\r\n/,161\r\n/users,129\r\n")
        XCTAssertEqual(render(.ndjson, sizes), #"{"path":"/","bytes":161}"# + "\n" + #"{"path":"/users","bytes":129}"# + "\n")
        XCTAssertEqual(render(.table, .null), "(0 rows)\n")
        XCTAssertEqual(render(.csv, .null), "")
        XCTAssertEqual(render(.ndjson, .null), "")
        XCTAssertEqual(render(.ndjson, .array([])), "")
        XCTAssertEqual(render(.table, .string("Ada")), ".value\n──────\nAda\n(1 row)\n")
        XCTAssertEqual(render(.tsv, .number(3.5)), ".value\n3.5\n")
        XCTAssertEqual(render(.ndjson, .string("Ada")), "\"Ada\"\n")
    }

    /// Line breaks and tabs: quoted in CSV, escaped in TSV and in a table's one line.
    func testTextThatBreaksLines() throws {
        let notes = try JSONValue.parse(#"{"a":{"text":"two\nlines","path":"C:\\tmp"},"b":{"text":"tab\there","path":"x"}}"#)
        XCTAssertEqual(render(.csv, notes), ".key,text,path\r\na,\"two\nlines\",C:\\tmp\r\nb,tab\there,x\r\n")
        XCTAssertEqual(render(.tsv, notes), ".key\ttext\tpath\na\ttwo\\nlines\tC:\\\\tmp\nb\ttab\\there\tx\n")
        XCTAssertEqual(render(.table, notes), """
        .key  text        path
        ────  ──────────  ──────
        a     two\\nlines  C:\\tmp
        b     tab\\there   x
        (2 rows)

        """)
    }

    /// Wider than the terminal: the widest columns are cut with …, wide characters count
    /// two columns; past the narrowest cut, the last columns are left out, and said so.
    func testTableFitsTheTerminal() throws {
        let rows = try JSONValue.parse(#"{"a":{"title":"The Analytical Engine and its notes","who":"日本語の名前"},"b":{"title":"short","who":"x"}}"#)
        XCTAssertEqual(render(.table, rows, width: 30), """
        .key  title        who
        ────  ───────────  ───────────
        a     The Analyt…  日本語の名…
        b     short        x
        (2 rows)

        """)
        let wide = try JSONValue.parse(#"[{"first":"aaaaaaaa","second":"bbbbbbbb","third":"cccccccc","fourth":"dddddddd"}]"#)
        XCTAssertEqual(render(.table, wide, width: 14), """
        first   second
        ──────  ──────
        aaaaa…  bbbbb…
        (1 row; 2 columns left out, past the terminal's width: third, fourth)

        """)
        XCTAssertEqual(render(.table, rows, width: 30, color: true).prefix(31), "\u{1B}[1m.key  title        who\u{1B}[0m\n")
    }

    /// Numbers align right; a column with anything else in it aligns left.
    func testNumbersAlignRight() throws {
        let scores = try JSONValue.parse(#"{"a":{"n":5,"m":"x"},"b":{"n":1234.5,"m":7}}"#)
        XCTAssertEqual(render(.table, scores), """
        .key       n  m
        ────  ──────  ─
        a          5  x
        b     1234.5  7
        (2 rows)

        """)
    }

    /// The columns are those of the first 100 rows; fields only later rows have are left
    /// out, and the note says which.
    func testFieldsPastTheSampleAreNoted() {
        var members: [(String, JSONValue)] = (0..<100).map { (String(format: "k%03d", $0), .object([("n", .number(Double($0)))])) }
        members.append(("k100", .object([("n", .number(100)), ("late", .bool(true))])))
        members.append(("k101", .object([("zeta", .number(1)), ("late", .bool(false))])))
        let (text, note) = OutputFormat.csv.render(.object(members), width: nil, color: false)
        XCTAssertTrue(text.hasPrefix(".key,n\r\nk000,0\r\n"))
        XCTAssertTrue(text.hasSuffix("k100,100\r\nk101,\r\n"))
        XCTAssertEqual(note, "note: 2 rows have fields the first 100 rows do not, which have no column (late, zeta): --format json or ndjson shows them")
        XCTAssertNil(OutputFormat.table.render(users, width: nil, color: false).note)
    }

    /// A stream's lines become rows as they come, under the columns it names; a line that
    /// is not JSON passes as it is.
    func testAStreamIsWrittenALineAtATime() {
        let screen = BufferOutput()
        let output = FormattedOutput(.csv, to: screen, columns: ["event", "key", "data"], width: nil, color: false)
        output.write(#"{"event":"child_added","key":"a","data":{"n":1}}"# + "\n" + #"{"event":"child_rem"#)
        XCTAssertEqual(screen.stdout, "event,key,data\r\nchild_added,a,\"{\"\"n\"\":1}\"\r\n")
        output.write(#"oved","key":"a","prev":null,"data":null}"# + "\n")
        output.write("not json\n")
        output.writeError("a message\n")
        output.write(#"{"event":"value","key":null,"data":"x,y"}"#)
        output.finish()
        XCTAssertEqual(screen.stdout, "event,key,data\r\nchild_added,a,\"{\"\"n\"\":1}\"\r\nchild_removed,a,\r\nnot json\nvalue,,\"x,y\"\r\n")
        XCTAssertEqual(screen.stderr, "a message\n")
    }

    // MARK: Through the shell

    var database: Database!
    var shell: Shell!
    var output: BufferOutput!

    override func setUpWithError() throws {
        database = try Database(folder: NSTemporaryDirectory() + "rtdb-format-" + UUID().uuidString)
        let output = BufferOutput()
        self.output = output
        let repo = embeddedRepo(database)
        shell = MainActor.assumeIsolated { Shell(repo: repo, output: output) }
    }

    override func tearDown() async throws {
        await shell.repo.close()
        database.close()
    }

    /// What `commands` print, on stdout and on stderr.
    @MainActor
    func lines(_ commands: String...) async -> (String, String) {
        let (out, err) = (output.stdout.count, output.stderr.count)
        for command in commands { _ = await shell.run(command) }
        return (String(output.stdout.dropFirst(out)), String(output.stderr.dropFirst(err)))
    }

    /// get and query print their rows in order, a list's with its keys (a sparse list has
    /// no empty rows); query's ndjson lines are its --json elements.
    @MainActor
    func testReadsInEveryFormat() async {
        _ = await shell.run(#"set /scores {"ada": {"score": 30, "team": "red"}, "bob": {"score": 10}, "cyd": {"score": 20, "team": "blue"}}"#)
        _ = await shell.run(#"set /list ["a", null, "c"]"#)
        var (out, err) = await lines("query /scores --orderByChild score --format table")
        XCTAssertEqual(out, """
        .key  score  team
        ────  ─────  ────
        bob      10
        cyd      20  blue
        ada      30  red
        (3 rows)

        """)
        XCTAssertEqual(err, "")
        (out, _) = await lines("query /scores --orderByChild score --limitToLast 2 --format ndjson", "query /scores --orderByChild score --limitToLast 2 --json")
        XCTAssertEqual(out, #"{"key":"cyd","value":{"score":20,"team":"blue"}}"# + "\n" + #"{"key":"ada","value":{"score":30,"team":"red"}}"# + "\n"
                       + #"[{"key":"cyd","value":{"score":20,"team":"blue"}},{"key":"ada","value":{"score":30,"team":"red"}}]"# + "\n")
        (out, _) = await lines("get /scores --orderByChild score --limitToFirst 2 --format csv", "get /list --format csv", "get /list/0 --format csv", "get /none --format csv")
        XCTAssertEqual(out, ".key,score,team\r\nbob,10,\r\ncyd,20,blue\r\n" + ".key,.value\r\n0,a\r\n2,c\r\n" + ".value\r\na\r\n")
        (out, _) = await lines("get / --shallow --format tsv", "ls /scores --format tsv", "ls /scores --long --format tsv")
        XCTAssertEqual(out, ".key\t.value\nlist\ttrue\nscores\ttrue\n" + ".value\nada\nbob\ncyd\n" + ".key\t.value\nada\t2\nbob\t1\ncyd\t2\n")
        (out, _) = await lines("du / --format csv")
        XCTAssertEqual(out, "path,bytes\r\n/,118\r\n/scores,85\r\n/list,14\r\n")
    }

    /// `rtdb --format` holds for every line; a line's own --format or --json wins.
    @MainActor
    func testTheProgramsFormatAndALinesOwn() async {
        _ = await shell.run(#"set /n {"a": 1, "b": 2}"#)
        shell.options.format = .csv
        let (out, _) = await lines("get /n", "get /n --json", "get /n --format ndjson", "pwd")
        XCTAssertEqual(out, ".key,.value\r\na,1\r\nb,2\r\n" + #"{"a":1,"b":2}"# + "\n" + #"{"key":"a","value":1}"# + "\n" + #"{"key":"b","value":2}"# + "\n" + ".value\r\n/\r\n")
    }

    /// repeat formats each run as it comes; export keeps its JSON (a file's format, written
    /// as it is read).
    @MainActor
    func testRepeatAndExport() async {
        _ = await shell.run(#"set /n {"a": 1}"#)
        var (out, _) = await lines("repeat 2 --every 10ms get /n --format csv", "repeat 2 --every 10ms --format tsv get /n")
        XCTAssertEqual(out, ".key,.value\r\na,1\r\n.key,.value\r\na,1\r\n" + ".key\t.value\na\t1\n.key\t.value\na\t1\n")
        shell.options.format = .csv
        (out, _) = await lines("export /n -")
        XCTAssertEqual(out, #"{"a":1}"# + "\n")
    }

    /// Mistakes name the format, at its column; streams refuse what they cannot be.
    @MainActor
    func testFormatsThatCannotBe() async {
        var (out, err) = await lines("get / --format xml")
        XCTAssertEqual(err, "error: unknown format 'xml': the formats are json, ndjson, table, csv, tsv\n  get / --format xml\n                 ^\n")
        (out, err) = await lines("get / --format tabel")
        XCTAssertTrue(err.hasPrefix("error: unknown format 'tabel': the formats are json, ndjson, table, csv, tsv; did you mean 'table'?\n"), err)
        (out, err) = await lines("get / --json --format csv")
        XCTAssertEqual(err, "error: --json is --format json: give one format\n  get / --json --format csv\n        ^\n")
        (out, err) = await lines("watch /n --format table")
        XCTAssertEqual(err, "error: --format table needs a result that ends, to align its columns; watch prints until stopped: use csv, tsv or ndjson\n")
        (out, err) = await lines("watch /n --bg --format csv", "monitor --bg --format table")
        XCTAssertEqual(err, "error: --format csv is not for a background watch: its lines come above the prompt one at a time; use ndjson or json\n"
                       + "error: --format table is not for a background monitor: its lines come above the prompt one at a time; use ndjson or json\n")
        XCTAssertEqual(out, "")
    }

    /// A foreground watch in csv: the header, then a row per event as it happens.
    @MainActor
    func testAWatchInCSV() async throws {
        _ = await shell.run(#"set /w {"a": 1}"#)
        let shell = self.shell!
        let watch = Task { @MainActor in await shell.run("watch /w --events child_added,child_changed --format csv") }
        let writer = embeddedRepo(database)
        while !output.stdout.contains("child_added") { try await Task.sleep(nanoseconds: 10_000_000) }
        try await writer.set(Path("/w/a"), Node(2)).acknowledged()
        while !output.stdout.contains("child_changed") { try await Task.sleep(nanoseconds: 10_000_000) }
        watch.cancel()
        _ = await watch.value
        await writer.close()
        // The time column changes from run to run.
        let rows = output.stdout.components(separatedBy: "\r\n").map { $0.split(separator: ",", maxSplits: 1).last.map(String.init) ?? "" }
        XCTAssertEqual(output.stdout.components(separatedBy: "\r\n").first, "time,event,path,key,prev,data")
        XCTAssertEqual(Array(rows.dropFirst()), ["child_added,/w,a,,1", "child_changed,/w,a,,2", ""])
    }
}

/// The README's example of formats, typed as printed into a shell at an 80-column terminal
/// (CSV's CRLF line ends as the README's line ends).
final class ReadmeFormatsTests: XCTestCase {
    @MainActor
    func testTheReadmeExampleRunsAsPrinted() async throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let heading = try XCTUnwrap(text.range(of: "**Output formats.**"))
        let start = try XCTUnwrap(text.range(of: "```text\n", range: heading.upperBound..<text.endIndex))
        let end = try XCTUnwrap(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        var steps: [(command: String, output: String)] = []
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            if line.hasPrefix("rtdb> ") { steps.append((String(line.dropFirst(6)), "")) } else { steps[steps.count - 1].output += line + "\n" }
        }
        XCTAssertEqual(steps.count, 4)
        let database = try Database(folder: NSTemporaryDirectory() + "rtdb-formats-" + UUID().uuidString)
        defer { database.close() }
        let repo = embeddedRepo(database)
        let output = BufferOutput()
        var options = Shell.Options()
        options.renderer = Renderer(pretty: true, color: false)
        options.width = { 80 }
        let shell = Shell(repo: repo, output: output, options: options)
        for step in steps {
            let before = output.stdout.count
            let outcome = await shell.run(step.command)
            XCTAssertEqual(outcome, .ok, output.stderr)
            XCTAssertEqual(String(output.stdout.dropFirst(before)).replacingOccurrences(of: "\r\n", with: "\n"), step.output, step.command)
        }
        XCTAssertEqual(output.stderr, "")
        await repo.close()
    }
}
