import XCTest
import RTDBData
import RTDBProtocol
@testable import RTDBShell

/// In-shell Tab completion: commands, flags and child keys.
final class CompleterTests: XCTestCase {
    let completer = Completer(childKeys: { path in
        switch path.description {
        case "/": return [("users", true), ("uploads", true), ("version", false)]
        case "/users": return [("ada", true), ("adam", false), ("bob", true)]
        case "/notes": return [("-Nx8abcADAxyz", true), ("-Nx9ada00000", true), ("-Ny0bob", true)]
        default: return []
        }
    }, childFields: { path in
        path.description == "/users" ? ["age", "name", "address"] : nil
    })

    func testCommands() {
        XCTAssertEqual(completer.complete("se", cwd: .root).candidates, ["set "])
        XCTAssertEqual(completer.complete("p", cwd: .root).candidates, ["pager ", "pending ", "priority ", "profile ", "purge-writes ", "push ", "pwd "])
    }

    func testFlags() {
        XCTAssertEqual(completer.complete("get /a --sh", cwd: .root).candidates, ["--shallow "])
        XCTAssertEqual(completer.complete("set /a 1 --", cwd: .root).candidates, ["--priority ", "--json ", "--format ", "--no-color "])
    }

    /// A flag's value: its choices, or for --orderByChild the fields of the first children
    /// at the command's path; a flag's value is not taken for an argument.
    func testFlagValues() {
        XCTAssertEqual(completer.complete("get /a --format ", cwd: .root).candidates, ["json ", "ndjson ", "table ", "csv ", "tsv "])
        XCTAssertEqual(completer.complete("du / --format t", cwd: .root).candidates, ["table ", "tsv "])
        XCTAssertEqual(completer.complete("get /a --format=c", cwd: .root).candidates, ["--format=csv "])
        XCTAssertEqual(completer.complete("watch /a --events child_a", cwd: .root).candidates, ["child_added "])
        XCTAssertEqual(completer.complete("query /users --orderByChild ", cwd: .root).candidates, ["age ", "name ", "address "])
        XCTAssertEqual(completer.complete("query /users --orderByChild a", cwd: .root).candidates, ["age ", "address "])
        XCTAssertEqual(completer.complete("query --orderByChild ", cwd: Path("users")).candidates, ["age ", "name ", "address "])
        XCTAssertEqual(completer.complete("query /version --orderByChild ", cwd: .root).candidates, [])
        XCTAssertEqual(completer.complete("set /a 1 --priority ", cwd: .root).candidates, [])
        // After a flag and its value, the path is still the first argument.
        XCTAssertEqual(completer.complete("get --format csv /users/b", cwd: .root).candidates, ["/users/bob/"])
        XCTAssertEqual(completer.complete("query --startAt 5 k /users/b", cwd: .root).candidates, ["/users/bob/"])
        XCTAssertEqual(completer.complete("query --startAt 5 --limitToFirst 2 /users/b", cwd: .root).candidates, ["/users/bob/"])
        // Where the parser reads a query bound's KEY, no path is offered.
        XCTAssertEqual(completer.complete("query --startAt 5 /users/b", cwd: .root).candidates, [])
        XCTAssertEqual(completer.complete("query --startAt=5 /users/b", cwd: .root).candidates, [])
        XCTAssertEqual(completer.complete("query --startAt=5 k /users/b", cwd: .root).candidates, ["/users/bob/"])
    }

    /// With no key starting with what is typed, the keys holding it anywhere (any case).
    func testKeysFoundInside() {
        XCTAssertEqual(completer.complete("get /notes/ada", cwd: .root), .init(word: "/notes/ada", candidates: ["/notes/-Nx8abcADAxyz/", "/notes/-Nx9ada00000/"], replaces: true))
        XCTAssertEqual(completer.complete("get /notes/bob", cwd: .root), .init(word: "/notes/bob", candidates: ["/notes/-Ny0bob/"], replaces: true))
        XCTAssertEqual(completer.complete("get /notes/-Ny", cwd: .root), .init(word: "/notes/-Ny", candidates: ["/notes/-Ny0bob/"]))
        XCTAssertEqual(completer.complete("get /notes/zed", cwd: .root), .init(word: "/notes/zed", candidates: [], replaces: true))
        // A relative push id starts with "-" and is no flag.
        XCTAssertEqual(completer.complete("get -Ny", cwd: Path("notes")).candidates, ["-Ny0bob/"])
    }

    func testChildKeys() {
        XCTAssertEqual(completer.complete("get /u", cwd: .root).candidates, ["/users/", "/uploads/"])
        XCTAssertEqual(completer.complete("get /users/ad", cwd: .root).candidates, ["/users/ada/", "/users/adam "])
        XCTAssertEqual(completer.complete("cd ad", cwd: Path("users")).candidates, ["ada/", "adam "])
        XCTAssertEqual(completer.complete("ls ", cwd: .root).candidates, ["users/", "uploads/", "version "])
        XCTAssertEqual(completer.complete("help s", cwd: .root).candidates, ["set ", "status ", "snapshot ", "sleep "])
        XCTAssertEqual(completer.complete("tx /v", cwd: .root).candidates, ["/version "])
        XCTAssertEqual(completer.complete("keepsynced /u", cwd: .root).candidates, ["/users/", "/uploads/"])
        // Every command whose first argument is a path, from the command table.
        XCTAssertEqual(completer.complete("query /users/b", cwd: .root).candidates, ["/users/bob/"])
        XCTAssertEqual(completer.complete("watch /v", cwd: .root).candidates, ["/version "])
        XCTAssertEqual(completer.complete("pwd /v", cwd: .root).candidates, [])
        XCTAssertEqual(Completer.commonPrefix(["/users/ada/", "/users/adam "]), "/users/ada")
    }

    /// After `repeat`'s own count and flags, a command line of its own.
    func testTheCommandARepeatRuns() {
        XCTAssertEqual(completer.complete("repeat 3 --every 1s ge", cwd: .root).candidates, ["get "])
        XCTAssertEqual(completer.complete("repeat 3 get /users/ad", cwd: .root).candidates, ["/users/ada/", "/users/adam "])
        XCTAssertEqual(completer.complete("repeat get /a --sh", cwd: .root).candidates, ["--shallow "])
        XCTAssertEqual(completer.complete("repeat 2 --ev", cwd: .root).candidates, ["--every "])
    }

    /// A command's fixed words, and a path where one comes after them (`rules check read PATH`).
    func testWordsAndPathsAfterThem() {
        XCTAssertEqual(completer.complete("rules ", cwd: .root).candidates, ["get ", "set ", "check ", "coverage "])
        XCTAssertEqual(completer.complete("rules c", cwd: .root).candidates, ["check ", "coverage "])
        XCTAssertEqual(completer.complete("rules check w", cwd: .root).candidates, ["write "])
        XCTAssertEqual(completer.complete("rules check read /users/a", cwd: .root).candidates, ["/users/ada/", "/users/adam "])
        XCTAssertEqual(completer.complete("rules set ", cwd: .root).candidates, [])
        XCTAssertEqual(completer.complete("rules check read /users/ada --a", cwd: .root).candidates, ["--as "])
        XCTAssertEqual(completer.complete("snapshot r", cwd: .root).candidates, ["restore ", "rm "])
        XCTAssertEqual(completer.complete("snapshot save ", cwd: .root).candidates, [])
    }
}

/// Tab never waits long for the database: a slow answer is kept for the next Tab.
final class CompletionReadsTests: XCTestCase {
    func testASlowAnswerComesOnTheNextTab() throws {
        let reads = CompletionReads<[String]>(patience: 0.05)
        XCTAssertEqual(reads.value(at: "/a") { ["fast"] }, ["fast"])
        let gate = DispatchSemaphore(value: 0)
        // Not answered within the patience: nothing yet (no earlier answer for /b).
        XCTAssertNil(reads.value(at: "/b") { await withCheckedContinuation { done in DispatchQueue.global().async { gate.wait(); done.resume() } }; return ["late"] })
        gate.signal()
        // A later Tab whose own read does not answer in time gets what the late one found.
        var later: [String]?
        for _ in 0..<100 where later == nil {
            later = reads.value(at: "/b") { try await Task.sleep(nanoseconds: 1_000_000_000); return ["never"] }
        }
        XCTAssertEqual(later, ["late"])
        XCTAssertEqual(reads.value(at: "/a") { throw CancellationError() }, ["fast"], "a failed read falls back to the last answer")
    }
}
