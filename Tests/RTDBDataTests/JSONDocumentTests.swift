import XCTest
import RTDBTestSupport
@testable import RTDBData

/// A document's value (big containers left as text) against the same text read whole: every
/// way of looking at or changing them must agree.
final class JSONDocumentTests: XCTestCase {
    private func readWhole(_ text: String, base: Path = .root) throws -> Node {
        try JSONReader.parse(text, options: .init(base: base))
    }

    private func readDocument(_ text: String, base: Path = .root) throws -> Node {
        var options = JSONReader.Options(base: base)
        options.documentsFrom = 0
        return try JSONReader.parse(data: Array(text.utf8), options: options)
    }

    /// Both throw, the same error (the whole reader's message, at its place).
    private func assertSameError(_ a: () throws -> Any, _ b: () throws -> Any, file: StaticString = #filePath, line: UInt = #line) {
        var first: Error?, second: Error?
        do { _ = try a() } catch { first = error }
        do { _ = try b() } catch { second = error }
        XCTAssertNotNil(first, file: file, line: line)
        XCTAssertEqual(first.map { "\($0)" }, second.map { "\($0)" }, file: file, line: line)
    }

    /// How many maps in `node` are still text.
    private func textMaps(_ node: Node) -> Int {
        guard case .children(let map) = node.content else { return 0 }
        if map.isValidatedText { return 1 + map.reduce(0) { $0 + textMaps($1.value) } }
        return map.reduce(0) { $0 + textMaps($1.value) }
    }

    private func assertSame(_ document: Node, _ whole: Node, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(document, whole, text, file: file, line: line)
        XCTAssertEqual(whole, document, text, file: file, line: line)
        for export in [false, true] {
            XCTAssertEqual(JSONWriter.string(document, options: .init(export: export)),
                           JSONWriter.string(whole, options: .init(export: export)), text, file: file, line: line)
        }
        XCTAssertEqual(JSONWriter.string(document, options: .init(pretty: true)),
                       JSONWriter.string(whole, options: .init(pretty: true)), file: file, line: line)
        XCTAssertEqual(document.hashString, whole.hashString, text, file: file, line: line)
        XCTAssertFalse(document.containsServerValues, file: file, line: line)
        XCTAssertEqual(document.leafCount, whole.leafCount, file: file, line: line)
        XCTAssertEqual(document.shallow, whole.shallow, file: file, line: line)
        compareMaps(document, whole, text, file: file, line: line)
    }

    /// Lookups, ranks, positions and ends, level by level.
    private func compareMaps(_ document: Node, _ whole: Node, _ text: String, file: StaticString, line: UInt) {
        guard case .children(let d) = document.content, case .children(let w) = whole.content else { return }
        XCTAssertTrue(d.checkInvariants(), text, file: file, line: line)
        XCTAssertEqual(d.count, w.count, text, file: file, line: line)
        XCTAssertEqual(d.first?.key, w.first?.key, file: file, line: line)
        XCTAssertEqual(d.last?.key, w.last?.key, file: file, line: line)
        XCTAssertEqual(d.lastKey, w.lastKey, file: file, line: line)
        XCTAssertEqual(d.keys, w.keys, text, file: file, line: line)
        var probes = w.keys
        probes += ["", "0", "01", "-1", "9999", "zz", "\u{E000}", "\u{10000}", "k", "k5"].map(ChildKey.init)
        for key in probes {
            XCTAssertEqual(d[key], w[key], "\(key) in \(text)", file: file, line: line)
            XCTAssertEqual(d.rank(of: key), w.rank(of: key), "rank of \(key) in \(text)", file: file, line: line)
        }
        for i in 0..<w.count {
            XCTAssertEqual(d.element(at: i).key, w.element(at: i).key, file: file, line: line)
            compareMaps(d.element(at: i).value, w.element(at: i).value, text, file: file, line: line)
        }
        var iterated: [ChildKey] = []
        for (key, _) in d { iterated.append(key) }
        XCTAssertEqual(iterated, w.keys, file: file, line: line)
    }

    func testBigContainersStayTextAndReadAsTheWholeValue() throws {
        let texts = [
            "[" + (0..<40).map(String.init).joined(separator: ",") + "]",
            "{" + (0..<30).map { "\"k\($0)\":{\"name\":\"x\",\"n\":\($0)}" }.joined(separator: ",") + "}",
            "{" + (0..<30).map { "\"\($0)\":\($0)" }.joined(separator: ",") + "}",
            "{\"a\": {\"list\": [" + (0..<20).map { "\"v\($0)\"" }.joined(separator: ", ") + "]}, \"b\": true}",
            "[" + (0..<18).map { "[\($0),\($0 + 1),{\"x\":[1,2,3]}]" }.joined(separator: ",") + "]",
        ]
        for text in texts {
            let document = try readDocument(text)
            XCTAssertGreaterThan(textMaps(document), 0, text)
            assertSame(document, try readWhole(text), text)
        }
    }

    func testTheTextIsCopiedOnlyWhereItIsWhatTheWriterWrites() throws {
        // Canonical: the writer's own output, in both forms.
        let list = "[" + (0..<20).map { String($0 * 7) }.joined(separator: ",") + "]"
        XCTAssertEqual(JSONWriter.string(try readDocument(list)), list)
        // Written whole, the text is the answer itself: shared, not copied.
        let listBytes = Array(list.utf8)
        var options = JSONReader.Options()
        options.documentsFrom = 0
        let written = JSONWriter.bytes(try JSONReader.parse(data: listBytes, options: options))
        XCTAssertEqual(written.withUnsafeBufferPointer { $0.baseAddress }, listBytes.withUnsafeBufferPointer { $0.baseAddress })
        let object = "{" + (0..<20).map { "\"k\(String(format: "%02d", $0))\":\($0)" }.joined(separator: ",") + "}"
        let node = try readDocument(object)
        XCTAssertEqual(JSONWriter.string(node), object)
        XCTAssertEqual(JSONWriter.string(node, options: .init(export: true)), object)
        // Decimals the writer writes as they are.
        let decimals = "[" + (0..<20).map { ["1.5", "-0.25", "0.0001", "123.456", "99999999999999.9"][$0 % 5] }.joined(separator: ",") + "]"
        XCTAssertEqual(JSONWriter.string(try readDocument(decimals)), decimals)
        for (text, canonical) in [("1.5", true), ("0.0001", true), ("0.00001", false), ("1.50", false), ("1.0", false),
                                  ("123456789012345", true), ("1234567890123456", false), ("0.123456789012345", true),
                                  ("0.1234567890123456", false), ("-0", false), ("-0.5", true), ("1e2", false)] {
            let list = try readDocument("[" + Array(repeating: text, count: 20).joined(separator: ",") + "]")
            guard case .children(let map) = list.content, case .encoded(let encoded) = map.storage else {
                return XCTFail("\(text): not kept as text")
            }
            XCTAssertEqual(encoded.container.canonical, canonical, text)
            // Canonical is what the writer writes; others may be too (the rule is a safe one).
            if canonical { XCTAssertEqual(JSONWriter.string(try readWhole(text)), text) }
        }
        // Not canonical: numbers, escapes, DEL, spaces, order, arrays in the export form.
        for variant in ["1.0", "1e3", "-0", "0.5", "12345678901234567", "\"\\u0041\"", "\"a\u{7F}\"", "\"\\/\""] {
            let text = "[" + Array(repeating: variant, count: 20).joined(separator: ",") + "]"
            assertSame(try readDocument(text), try readWhole(text), text)
        }
        let spaced = "[ " + (0..<20).map(String.init).joined(separator: " , ") + " ]"
        XCTAssertEqual(JSONWriter.string(try readDocument(spaced)), spaced.replacingOccurrences(of: " ", with: ""))
        XCTAssertEqual(JSONWriter.string(try readDocument(list), options: .init(export: true)),
                       JSONWriter.string(try readWhole(list), options: .init(export: true)))
    }

    /// A document keeps the array it is read from: one with much spare room is copied to its
    /// size first, one without is kept as it is.
    func testADocumentKeepsItsTextAtItsSize() throws {
        let text = "[" + (0..<2000).map(String.init).joined(separator: ",") + "]"
        var roomy: [UInt8] = []
        roomy.reserveCapacity(4 * text.utf8.count)
        roomy.append(contentsOf: text.utf8)
        let exact = Array(text.utf8)
        for (bytes, copied) in [(roomy, true), (exact, false)] {
            let kept = JSONDocumentScanner.keptAtItsSize(bytes)
            XCTAssertEqual(kept, bytes)
            XCTAssertLessThanOrEqual(kept.capacity, kept.count + kept.count / 4)
            let same = kept.withUnsafeBufferPointer { a in bytes.withUnsafeBufferPointer { a.baseAddress == $0.baseAddress } }
            XCTAssertEqual(same, !copied)
        }
        var options = JSONReader.Options()
        options.documentsFrom = 0
        let node = try JSONReader.parse(data: roomy, options: options)
        let written = JSONWriter.bytes(node)
        XCTAssertEqual(written, roomy)
        XCTAssertLessThanOrEqual(written.capacity, written.count + written.count / 4)
    }

    func testTextsADocumentCannotHoldAreReadWhole() throws {
        let fill = (0..<20).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        for text in ["{\(fill),\"n\":null}", "{\(fill),\"e\":{}}", "{\(fill),\"e\":[]}", "{\(fill),\".priority\":1}",
                     "{\(fill),\"s\":{\".sv\":\"timestamp\"}}", "{\(fill),\"k\\u0031x\":1}", "{\(fill),\"k3\":\"again\"}",
                     "{\(fill),\"v\":{\".value\":1,\".priority\":2}}"] {
            let document = try readDocument(text)
            XCTAssertEqual(textMaps(document), 0, text)
            XCTAssertEqual(document, try readWhole(text), text)
        }
        // Errors are the reader's own, with their place.
        for text in ["[" + Array(repeating: "1", count: 20).joined(separator: ",") + ",]", "{\(fill),\"a.b\":1}", "{\(fill)"] {
            assertSameError({ try readDocument(text) }, { try readWhole(text) })
        }
    }

    /// The scanner's table of bytes no key may hold says what `Path.problem` says.
    func testKeyCheckAgreesWithThePathRules() {
        for byte in 0...255 {
            for key in [[UInt8(byte)], [0x61, UInt8(byte), 0x62]] {
                let plain = key.withUnsafeBufferPointer { JSONDocumentScanner.isPlainKey($0) }
                XCTAssertEqual(plain, Path.problem(utf8: key) == nil, "byte \(byte)")
            }
        }
        XCTAssertFalse([UInt8]().withUnsafeBufferPointer { JSONDocumentScanner.isPlainKey($0) })
    }

    func testLimitsOnPathsDependOnWhereTheValueGoes() throws {
        var deep = "[" + (0..<20).map(String.init).joined(separator: ",") + "]"
        for _ in 0..<5 { deep = "{\"level\":\(deep)}" }
        let node = try readDocument(deep)
        XCTAssertGreaterThan(textMaps(node), 0)
        let near = Path(keys: (0..<26).map { "p\($0)" })
        let far = Path(keys: (0..<27).map { "p\($0)" })
        XCTAssertNoThrow(try node.validate(at: near))
        assertSameError({ try node.validate(at: far) }, { try (try readWhole(deep)).validate(at: far) })
        // Read for a place too deep, it is read whole, which names the offending path.
        assertSameError({ try readDocument(deep, base: far) }, { try readWhole(deep, base: far) })
        let longKey = String(repeating: "k", count: 700)
        let long = "{\"\(longKey)\":[" + (0..<20).map(String.init).joined(separator: ",") + "]}"
        XCTAssertNoThrow(try (try readDocument(long)).validate(at: Path("/a")))
        XCTAssertThrowsError(try (try readDocument(long)).validate(at: Path(keys: [String(repeating: "p", count: 70)])))
    }

    func testChangesReadTheTextIntoATreeAndLeaveOtherCopiesAsTheyWere() throws {
        let text = "{" + (0..<40).map { "\"k\($0)\":{\"n\":\($0)}" }.joined(separator: ",") + "}"
        let document = try readDocument(text)
        var changed = document
        changed.set(Path("/k5/n"), to: Node(99))
        changed.set(Path("/k7"), to: .empty)
        changed.set(Path("/new"), to: Node("x"))
        var expected = try readWhole(text)
        expected.set(Path("/k5/n"), to: Node(99))
        expected.set(Path("/k7"), to: .empty)
        expected.set(Path("/new"), to: Node("x"))
        assertSame(changed, expected, text)
        assertSame(document, try readWhole(text), text)
        var merged = document
        merged.merge([(Path("/k1"), Node(1)), (Path("/k30/m"), Node(true))])
        var expectedMerge = try readWhole(text)
        expectedMerge.merge([(Path("/k1"), Node(1)), (Path("/k30/m"), Node(true))])
        assertSame(merged, expectedMerge, text)
    }

    /// Random texts: keys of every order class, leaves in every spelling, spaces or none.
    func testRandomDocuments() throws {
        var rng = SeededRandom(seed: 40)
        var kept = 0
        for _ in 0..<400 {
            let spaced = Int.random(in: 0..<4, using: &rng) == 0
            let text = randomValue(&rng, depth: 0, spaced: spaced)
            let whole: Node
            do { whole = try readWhole(text) } catch {
                XCTAssertThrowsError(try readDocument(text), text)
                continue
            }
            let document = try readDocument(text)
            if textMaps(document) > 0 { kept += 1 }
            assertSame(document, whole, text)
            // A change below, on both.
            if case .children(let map) = whole.content, let key = map.keys.randomElement(using: &rng) {
                var a = document, b = whole
                a.set(Path(keys: [key.name, "added"]), to: Node(1))
                b.set(Path(keys: [key.name, "added"]), to: Node(1))
                assertSame(a, b, text)
            }
        }
        XCTAssertGreaterThan(kept, 60)
    }

    private func randomKey(_ rng: inout SeededRandom) -> String {
        let pool = ["a", "b", "k1", "k10", "k2", "0", "1", "2", "10", "01", "-3", "2147483648", "\u{E000}x", "\u{10000}y",
                    "é", "Z", "zz", "5", "17", "-0", "name", "n"]
        return Int.random(in: 0..<3, using: &rng) == 0 ? "r\(Int.random(in: 0..<1000, using: &rng))" : pool.randomElement(using: &rng) ?? "a"
    }

    private func randomLeaf(_ rng: inout SeededRandom) -> String {
        let pool = ["1", "-7", "0", "-0", "1.5", "1e3", "2.0", "123456789012345678", "true", "false", "\"s\"",
                    "0.5", "-0.25", "0.0001", "0.00001", "0.000123", "123.456", "100.250", "1.000000000000001",
                    "99999999999999.9", "-0.0", "12345678901234.5",
                    "\"\\u00e9\\n\"", "\"\u{7F}\"", "\"üñî\"", "\"\\\"q\\\"\"", "9007199254740993", "-1.25e-7"]
        return pool.randomElement(using: &rng) ?? "1"
    }

    private func randomValue(_ rng: inout SeededRandom, depth: Int, spaced: Bool) -> String {
        let roll = Int.random(in: 0..<10, using: &rng)
        if depth >= 3 || roll < 4 { return randomLeaf(&rng) }
        let sp = spaced ? " " : ""
        let count = (depth == 0 ? [1, 3, 16, 17, 18, 25, 40] : [1, 2, 3, 17]).randomElement(using: &rng) ?? 3
        if roll < 6 {
            let items = (0..<count).map { _ in randomValue(&rng, depth: depth + 1, spaced: spaced) }
            return "[" + sp + items.joined(separator: "," + sp) + sp + "]"
        }
        var keys = Set<String>()
        while keys.count < count { keys.insert(randomKey(&rng) + (keys.count > 15 ? "\(keys.count)" : "")) }
        var ordered = Array(keys)
        if Int.random(in: 0..<2, using: &rng) == 0 { ordered.sort { ChildKey.compare(ChildKey($0), ChildKey($1)) < 0 } } else { ordered.shuffle(using: &rng) }
        var members = ordered.map { "\"\($0)\"" + sp + ":" + sp + randomValue(&rng, depth: depth + 1, spaced: spaced) }
        // A small object may name a key twice (the last one counts); a big one so is read whole.
        if count <= 16, Int.random(in: 0..<4, using: &rng) == 0, let again = ordered.randomElement(using: &rng) {
            members.insert("\"\(again)\":" + randomValue(&rng, depth: depth + 1, spaced: spaced),
                           at: Int.random(in: 0...members.count, using: &rng))
        }
        return "{" + sp + members.joined(separator: "," + sp) + sp + "}"
    }
}
