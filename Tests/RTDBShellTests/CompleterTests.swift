import XCTest
import RTDBData
import RTDBProtocol
@testable import RTDBShell

/// In-shell Tab completion: commands, flags and child keys.
final class CompleterTests: XCTestCase {
    let completer = Completer { path in
        switch path.description {
        case "/": return [("users", true), ("uploads", true), ("version", false)]
        case "/users": return [("ada", true), ("adam", false), ("bob", true)]
        default: return []
        }
    }

    func testCommands() {
        XCTAssertEqual(completer.complete("se", cwd: .root).candidates, ["set "])
        XCTAssertEqual(completer.complete("p", cwd: .root).candidates, ["pager ", "pending ", "priority ", "profile ", "purge-writes ", "push ", "pwd "])
    }

    func testFlags() {
        XCTAssertEqual(completer.complete("get /a --sh", cwd: .root).candidates, ["--shallow "])
        XCTAssertEqual(completer.complete("set /a 1 --", cwd: .root).candidates, ["--priority ", "--json ", "--format ", "--no-color "])
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
