import Foundation
import XCTest
import RTDBData
import RTDBProtocol
@testable import RTDBShell
import RTDBTestSupport

/// How `import` cuts a file into writes: the exact writes, that applying them gives the file
/// (replacing or merging), that running them again converges, and errors by line and column.
@MainActor
final class ImportSplitterTests: XCTestCase {
    /// The writes for `text` imported at /t, each as "set PATH JSON" or "update PATH JSON".
    func writes(_ text: String, merge: Bool = false, chunk: Int = 1 << 20, whole: Int? = nil) async throws -> [ImportWrite] {
        let file = NSTemporaryDirectory() + "rtdb-split-" + UUID().uuidString
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fd = open(file, O_RDONLY)
        defer { close(fd) }
        var out: [ImportWrite] = []
        let splitter = ImportSplitter(target: Path("t"), merge: merge, chunk: chunk, whole: whole ?? chunk, window: ByteWindow(fd: fd, name: "f.json")) { out.append($0) }
        try await splitter.run()
        return out
    }

    func describe(_ writes: [ImportWrite]) -> [String] {
        writes.map { write in
            switch write {
            case let .set(path, node): return "set \(path) \(JSONWriter.string(node, options: .init(export: true)))"
            case let .update(path, updates):
                return "update \(path) " + updates.map { "\($0.path.wireString)=\(JSONWriter.string($0.value, options: .init(export: true)))" }.joined(separator: " ")
            }
        }
    }

    /// The database after the writes, from `start`.
    func apply(_ writes: [ImportWrite], to start: Node) -> Node {
        writes.reduce(start) { root, write in
            switch write {
            case let .set(path, node): return root.setting(path, to: node)
            case let .update(path, updates): return root.merging(updates.map { (path.appending($0.path), $0.value) })
            }
        }
    }

    let existing = Node(json: .object([("t", .object([("old", .number(1)), ("a", .object([("gone", .bool(true))]))])), ("other", .number(2))]))

    func testAFileThatFitsIsOneWrite() async throws {
        let text = #"{"a": {"x": 1, "y": [true, null, "z"]}, "b": "hi", "c": {".priority": 5, "z": 1}}"#
        let whole = describe(try await writes(text))
        let merged = describe(try await writes(text, merge: true))
        let number = describe(try await writes("  42 \n"))
        let null = describe(try await writes("null"))
        let empty = describe(try await writes("{}", merge: true))
        XCTAssertEqual(whole, [#"set /t {"a":{"x":1,"y":{"0":true,"2":"z"}},"b":"hi","c":{".priority":5,"z":1}}"#])
        XCTAssertEqual(merged,
                       [#"update /t a={"x":1,"y":{"0":true,"2":"z"}} b="hi" c={".priority":5,"z":1}"#])
        XCTAssertEqual(number, ["set /t 42"])
        XCTAssertEqual(null, ["set /t null"])
        XCTAssertEqual(empty, [])
    }

    func testALargeFileIsCutIntoWritesThatRebuildIt() async throws {
        let text = """
        {"list": {"k1": {"v": 1111111111}, "k2": {"v": 2222222222}, "k3": {"deep": {"d1": 33333333333, "d2": 44444444444}}},
         "arr": [10, 20, 30], "s": "a string value"}
        """
        let replaced = try await writes(text, chunk: 45)
        XCTAssertEqual(describe(replaced), [
            #"set /t {"list":{"k1":{"v":1111111111}}}"#,
            #"update /t list/k2={"v":2222222222} list/k3=null"#,
            #"update /t list/k3/deep={"d1":33333333333,"d2":44444444444}"#,
            #"update /t arr={"0":10,"1":20,"2":30} s="a string value""#,
        ])
        let expected = try JSONReader.parse(text)
        XCTAssertEqual(apply(replaced, to: existing).child("t"), expected)
        XCTAssertEqual(apply(replaced, to: existing).child("other"), Node(2))
        // Stopped after any write, the same import run again gives the file.
        for stop in 0...replaced.count {
            XCTAssertEqual(apply(replaced, to: apply(Array(replaced.prefix(stop)), to: existing)).child("t"), expected)
        }

        let merged = try await writes(text, merge: true, chunk: 45)
        XCTAssertEqual(describe(merged).first, #"update /t list={"k1":{"v":1111111111}}"#)
        // Children of /t the file does not name stay.
        var result = expected.updatingChild(ChildKey("old"), Node(1)).updatingChild(ChildKey("a"), existing.child(at: Path("t/a")))
        XCTAssertEqual(apply(merged, to: existing).child("t"), result)
        result = apply(merged, to: apply(Array(merged.prefix(2)), to: existing)).child("t")
        XCTAssertEqual(result.child("list"), expected.child("list"))
    }

    func testAPriorityOfASplitObjectIsSetAfterItsChildren() async throws {
        let text = #"{".priority": 7, "a": {"x": "xxxxxxxxxxxxxxxxxxxx"}, "b": {".value": "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", ".priority": 2}}"#
        let cut = try await writes(text, chunk: 40)
        XCTAssertEqual(describe(cut), [
            #"set /t {"a":{"x":"xxxxxxxxxxxxxxxxxxxx"}}"#,
            #"update /t b={".value":"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy",".priority":2}"#,
            #"set /t/.priority 7"#,
        ])
        XCTAssertEqual(apply(cut, to: .empty).child("t"), try JSONReader.parse(text))
    }

    func testANullPriorityIsNoPriorityWhateverTheSize() async throws {
        let text = #"{".priority": null, "a": {"x": "xxxxxxxxxxxxxxxxxxxx"}, "b": 1}"#
        let cut = describe(try await writes(text, chunk: 40))
        let whole = describe(try await writes(text))
        XCTAssertEqual(cut, [#"set /t {"a":{"x":"xxxxxxxxxxxxxxxxxxxx"}}"#, #"update /t b=1"#])
        XCTAssertEqual(whole, [#"set /t {"a":{"x":"xxxxxxxxxxxxxxxxxxxx"},"b":1}"#])
    }

    /// `1e20` is 4 bytes in the file and 21 written out: a write that fits as read but not
    /// as sent is halved; a single value that cannot fit says so.
    func testAWriteLargerWrittenOutThanReadIsHalved() async throws {
        let list = "[" + Array(repeating: "1e20", count: 400_000).joined(separator: ",") + "]"
        let merged = try await writes(#"{"a": \#(list), "b": \#(list)}"#, merge: true, chunk: 15 << 20)
        XCTAssertEqual(merged.count, 2)
        XCTAssertEqual(merged.map(\.path), [Path("t"), Path("t")])
        do {
            _ = try await writes("[" + Array(repeating: list, count: 2).joined(separator: ",") + "]", chunk: 15 << 20)
            XCTFail("no error")
        } catch let error as ShellError {
            XCTAssertEqual(error.message, "the value at /t is 18 MB written out (numbers and characters take more room than in the file), more than a write may carry (16 MB): import it with a smaller --chunk-size")
        }
    }

    func testErrorsNameTheFileLineAndColumnAndTheKey() async throws {
        let cases: [(String, Bool, String)] = [
            ("{\"a\": {\"x\": 1,\n \"y\" 2}}", false, "f.json:2:6: expected ':' after the key, found '2'"),
            ("{\"list\": {\"k1\": 1111111111, \"bad.key\": 2222222222}}", false,
             ##"f.json:1:29: invalid key "bad.key" in "/t/list/bad.key": keys must not contain ".", "$", "#", "[", "]" or "/" (found ".")"##),
            ("{\"list\": {\"k1\": 1111111111, \"k2\": [1, 2, tru]}}", false, "f.json:1:42: expected a value, found 't'"),
            ("[1, 2]", true, "f.json:1:1: import --merge needs a JSON object (its keys are the children to replace), found '['"),
            ("{\"a\": 1} x", false, "f.json:1:10: unexpected 'x' after the value"),
            ("", false, "f.json:1:1: the file is empty: expected a JSON value"),
            ("{\"list\": {\"k1\": 1111111111, \"k2\": 2222222222", false, "f.json:1:45: unterminated object: expected ',' or '}'"),
            // A backslash as the file's last byte, inside a string.
            ("[\"\\", false, "f.json:1:2: unterminated string"),
            ("{\"list\": {\"k1\": 1111111111, \"k2\": \"abc\\", false, "f.json:1:35: unterminated string"),
        ]
        for (text, merge, message) in cases {
            do {
                _ = try await writes(text, merge: merge, chunk: 20)
                XCTFail("no error for \(text)")
            } catch let error as ShellError {
                XCTAssertEqual(error.message, message, text)
            }
        }
    }

    /// Random documents (seeded): whatever the write size, the writes rebuild exactly what
    /// JSONReader reads from the whole file, replacing or merging.
    func testRandomDocumentsCutAnywhereRebuildTheSameValue() async throws {
        var rng = SeededRandom(seed: 20261123)
        var cut = 0
        for round in 0..<150 {
            let text = randomJSON(&rng, depth: 0, top: true)
            let expected = try JSONReader.parse(text, options: .init(base: Path("t")))
            let chunk = Int.random(in: 16...400, using: &rng)
            let replaced = try await writes(text, chunk: chunk)
            if replaced.count > 2 { cut += 1 }
            XCTAssertEqual(json(apply(replaced, to: existing).child("t")), json(expected), "round \(round), chunk \(chunk): \(text)")
            let merged = try await writes(text, merge: true, chunk: chunk)
            // As update does: each top-level key replaced, null ones removed.
            let result = existing.child("t").merging(try JSONReader.parseUpdate(text))
            XCTAssertEqual(json(apply(merged, to: existing).child("t")), json(result), "round \(round), chunk \(chunk), merged: \(text)")
        }
        // Most documents were cut into several writes: the property is about those.
        XCTAssertGreaterThan(cut, 75)
    }

    func json(_ node: Node) -> String { JSONWriter.string(node, options: .init(export: true)) }

    /// An object at the top (so that both ways apply), values of every kind inside, spaces
    /// and escapes here and there.
    func randomJSON(_ rng: inout SeededRandom, depth: Int, top: Bool = false) -> String {
        let space = { (rng: inout SeededRandom) -> String in ["", " ", "\n  ", "\t"][Int.random(in: 0..<4, using: &rng)] }
        let kind = top ? 0 : Int.random(in: 0..<(depth > 3 ? 3 : 5), using: &rng)
        switch kind {
        case 0, 3:
            var members: [String] = []
            var keys = Set<String>()
            for _ in 0..<Int.random(in: (top ? 1 : 0)...6, using: &rng) {
                let key = ["a", "b", "k1", "k10", "k2", "é", "x\\\"y", "10", "-3", "zz"][Int.random(in: 0..<10, using: &rng)]
                guard keys.insert(key).inserted else { continue }
                members.append(space(&rng) + "\"\(key)\"" + space(&rng) + ":" + space(&rng) + randomJSON(&rng, depth: depth + 1))
            }
            if !top && Int.random(in: 0..<6, using: &rng) == 0 && !members.isEmpty {
                members.insert("\".priority\": \(Int.random(in: 0..<9, using: &rng))", at: Int.random(in: 0...members.count, using: &rng))
            }
            return "{" + members.joined(separator: ",") + space(&rng) + "}"
        case 4:
            let items = (0..<Int.random(in: 0..<5, using: &rng)).map { _ in space(&rng) + randomJSON(&rng, depth: depth + 1) }
            return "[" + items.joined(separator: ",") + "]"
        case 1:
            return ["1", "-2.5", "1e20", "0", "true", "false", "null", "123456789012"][Int.random(in: 0..<8, using: &rng)]
        default:
            return ["\"s\"", "\"long string of some length, to cut writes\"", "\"tab\\there\"", "\"\\u00e9\\ud83d\\ude00\"", "\"\""][Int.random(in: 0..<5, using: &rng)]
        }
    }
}
