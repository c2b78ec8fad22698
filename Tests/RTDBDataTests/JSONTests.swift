import XCTest
import RTDBTestSupport
@testable import RTDBData

final class JSONTests: XCTestCase {
    func roundTrip(_ json: String, export: Bool = false) throws -> String {
        JSONWriter.string(try JSONReader.parse(json), options: .init(export: export))
    }

    /// The UTF-8 check (strings, and text frames) against the standard library's, on runs of
    /// ASCII of every length around its eight-byte steps with a byte of every kind after them.
    func testUTF8CheckAgreesWithTheStandardLibrary() {
        var rng = SeededRandom(seed: 8)
        let tails: [[UInt8]] = [[0xC3, 0xA9], [0xC3], [0xE2, 0x82, 0xAC], [0xED, 0xA0, 0x80], [0xF0, 0x9F, 0x90, 0xB5],
                                [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF], [0x80], [0xFF], [0xE0, 0x80, 0xAF]]
        for _ in 0..<2000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(rng.next() % 4) {
                bytes += (0..<Int(rng.next() % 20)).map { _ in UInt8(0x20 + rng.next() % 0x5F) }
                bytes += tails[Int(rng.next() % UInt64(tails.count))]
            }
            bytes += (0..<Int(rng.next() % 12)).map { _ in UInt8(rng.next() % 0x80) }
            let expected = bytes.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) != nil }
            XCTAssertEqual(bytes.withUnsafeBufferPointer { JSONReader.isValidUTF8($0) }, expected, "\(bytes)")
        }
    }

    func testScalarsAndNumbers() throws {
        XCTAssertEqual(try roundTrip("4"), "4")
        XCTAssertEqual(try roundTrip("4.0"), "4")
        XCTAssertEqual(try roundTrip("-0.5"), "-0.5")
        XCTAssertEqual(try roundTrip("1e21"), "1e+21")
        XCTAssertEqual(try roundTrip("1e20"), "100000000000000000000")
        XCTAssertEqual(try roundTrip("12345678901234568"), "12345678901234568")
        XCTAssertEqual(try roundTrip("1.5e-7"), "1.5e-7")
        // Integers are written digit by digit, not through a String.
        XCTAssertEqual(try roundTrip("0"), "0")
        XCTAssertEqual(try roundTrip("-0"), "0")
        XCTAssertEqual(try roundTrip("-42"), "-42")
        XCTAssertEqual(try roundTrip("-9100000000000000000"), "-9100000000000000000")
        XCTAssertEqual(try roundTrip("9300000000000000000"), "9300000000000000000")
        XCTAssertEqual(try roundTrip("[7, -1.25, 1000]"), "[7,-1.25,1000]")
        // Escapes in the middle, at either end, and runs between them.
        XCTAssertEqual(try roundTrip(#""\u0001ab\tc\u001f\u007f""#), #""\u0001ab\tc\u001f\u007f""#)
        XCTAssertEqual(try roundTrip(#""\"\"""#), #""\"\"""#)
        XCTAssertEqual(try roundTrip(#""""#), #""""#)
        XCTAssertEqual(try roundTrip("true"), "true")
        XCTAssertEqual(try roundTrip("null"), "null")
        XCTAssertEqual(try roundTrip(#""a\"b\\c\n\u00e9\ud83d\udc35""#), #""a\"b\\c\né🐵""#)
    }

    /// Strings are scanned eight bytes at a time, the last few padded into one word: every
    /// length around those words, with a byte to escape (or one beside those) at every
    /// position, is written as a byte-at-a-time escape writes it: as a value and a key in a
    /// document, and as a value alone (which the wire writes without the document's buffer).
    func testStringsOfEveryLengthWithEscapesAnywhere() throws {
        func expected(_ bytes: [UInt8]) -> String {
            var out = "\""
            for b in bytes {
                switch b {
                case 0x22: out += "\\\""
                case 0x5C: out += "\\\\"
                case 0x0A: out += "\\n"
                case 0x00, 0x01, 0x1F, 0x7F: out += String(format: "\\u%04x", b)
                default: out += String(UnicodeScalar(b))
                }
            }
            return out + "\""
        }
        for length in 0...26 {
            for special in [nil, 0x22, 0x5C, 0x0A, 0x00, 0x01, 0x1F, 0x7F, 0x20, 0x21, 0x7E] as [UInt8?] {
                for at in special == nil ? [0] : Array(0..<max(length, 1)) {
                    var bytes = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
                    if let special, length > 0 { bytes[at] = special }
                    let text = String(decoding: bytes, as: UTF8.self)
                    let quoted = expected(bytes)
                    XCTAssertEqual(JSONWriter.string(Node(text)), quoted, "\(bytes)")
                    // Keys hold no control characters.
                    let key = length > 0 && (special.map { $0 >= 0x20 && $0 != 0x7F } ?? true) ? text : "k"
                    let object = Node(children: ChildMap(unsorted: [(ChildKey(key), Node(text)), (ChildKey("ÿ"), Node(true))]))
                    XCTAssertEqual(JSONWriter.string(object), "{\(expected(Array(key.utf8))):\(quoted),\"ÿ\":true}", "\(bytes)")
                }
            }
        }
        // Beyond ASCII, where a word holds part of a character.
        for text in ["é", "aaaaaaé", "aaaaaaaé", "😀😀", "a\u{7F}😀aaaaaaaa"] {
            let written = JSONWriter.string(Node(children: ChildMap(unsorted: [(ChildKey("x"), Node(text))])))
            XCTAssertEqual(try JSONReader.parse(written).child("x"), Node(text))
        }
    }

    /// The reader scans strings eight bytes at a time too: a byte that ends the plain run (a
    /// quote, a backslash, a control character) or is not ASCII, at every position of every
    /// length around those words, is found where it is: in a string alone, where the closing
    /// quote is the input's last byte, and in a string with more input after it.
    func testReaderFindsEveryByteThatMattersAtEveryPosition() throws {
        /// The string as a value, alone and as the first element of an array; then where its
        /// opening quote is in each.
        func read(_ quoted: [UInt8]) -> [(result: Result<Node, Error>, quote: Int)] {
            [(quoted, 0), (Array("[".utf8) + quoted + Array(#", "and more after it"]"#.utf8), 1)].map { input, quote in
                (Result { try JSONReader.parse(data: input) }.map { quote == 0 ? $0 : $0.child("0") }, quote)
            }
        }
        for length in 1...26 {
            let plain = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            for at in 0..<length {
                // A control character is refused at its own offset (after the quote).
                var control = plain
                control[at] = 0x1F
                for (result, quote) in read([0x22] + control + [0x22]) {
                    XCTAssertThrowsError(try result.get()) { error in
                        XCTAssertEqual((error as? JSONParseError)?.offset, quote + 1 + at, "\(length) \(at)")
                    }
                }
                // An escape anywhere.
                var escaped = Array(plain.map { Character(UnicodeScalar($0)) })
                escaped[at] = "\n"
                let text = "\"" + String(escaped).replacingOccurrences(of: "\n", with: "\\n") + "\""
                for (result, _) in read(Array(text.utf8)) {
                    XCTAssertEqual(try result.get(), Node(String(escaped)), "\(length) \(at)")
                }
                // Two bytes of "é", and an invalid byte, where a word holds part of them.
                var accented = plain
                accented.insert(contentsOf: [0xC3, 0xA9], at: at)
                for (result, _) in read([0x22] + accented + [0x22]) {
                    XCTAssertEqual(try result.get(), Node(String(decoding: accented, as: UTF8.self)), "\(length) \(at)")
                }
                var invalid = plain
                invalid[at] = 0xFF
                for (result, _) in read([0x22] + invalid + [0x22]) {
                    XCTAssertThrowsError(try result.get()) { error in
                        XCTAssertEqual((error as? JSONParseError)?.message, "string is not valid UTF-8", "\(length) \(at)")
                    }
                }
            }
            // The plain string itself, and unterminated: the error is at the opening quote.
            for (result, _) in read([0x22] + plain + [0x22]) {
                XCTAssertEqual(try result.get(), Node(String(decoding: plain, as: UTF8.self)))
            }
            XCTAssertEqual(error(String(decoding: [0x22] + plain, as: UTF8.self)), JSONParseError(message: "unterminated string", offset: 0))
        }
    }

    /// Keys a document repeats are kept by their spelling and given again: the same key
    /// however it is written (escaped or not), different keys never confused (thousands
    /// sharing a table of 256), long keys, integer keys, and bad keys refused wherever met.
    func testKeysMetAgainAreReadAsTheyAreWritten() throws {
        // 2,000 records of 4 fields drawn from 600 names: the names collide in the table, and
        // some differ only past their eighth byte, or are longer than the table keeps.
        var records: [String] = []
        var expected: [(ChildKey, Node)] = []
        for i in 0..<2_000 {
            let names = ["f\(i % 600)", "category_\(i % 300)", "field_\((i * 7) % 600)_with_a_name_longer_than_16_bytes", "\(i % 40)"]
            records.append("\"r\(i)\": {" + names.enumerated().map { "\"\($1)\": \($0)" }.joined(separator: ", ") + "}")
            let fields = names.enumerated().map { (ChildKey($1), Node(Double($0))) }
            expected.append((ChildKey("r\(i)"), Node(children: ChildMap(unsorted: fields))))
        }
        let document = try JSONReader.parse("{" + records.joined(separator: ", ") + "}")
        XCTAssertEqual(document, Node(children: ChildMap(unsorted: expected)))
        XCTAssertEqual(document.child(at: Path("r1234/f34")), Node(0))
        XCTAssertEqual(document.child(ChildKey("r1234")).children.keys.map(\.intValue), [34, nil, nil, nil])
        XCTAssertEqual(document.child(at: Path("r1234/category_34")), Node(1))

        // A key met often, then written with an escape: the same key, and the later value wins.
        let many = (0..<20).map { "\"name\": \($0)" }.joined(separator: ", ")
        let same = try JSONReader.parse("[{\(many)}, {\"name\": 1, \"n\\u0061me\": 2}, {\"n\\u0061me\": 3, \"name\": 4}]")
        XCTAssertEqual(JSONWriter.string(same), #"[{"name":19},{"name":2},{"name":4}]"#)

        // Refused after the table exists, with the path of escaped keys and positions.
        let prefix = (0..<40).map { "\"k\($0)\": 1" }.joined(separator: ", ")
        XCTAssertEqual(error("{\(prefix), \"l\\u0069st\": [0, {\"ok\": {\"bad.key\": 1}}]}")?.message,
                       ##"invalid key "bad.key" in "/list/1/ok/bad.key": keys must not contain ".", "$", "#", "[", "]" or "/" (found ".")"##)
        XCTAssertEqual(error("{\(prefix), \"k1.\": 1}")?.offset, prefix.utf8.count + 3)
        let deep = (0..<33).map { _ in "{\"k1\": " }.joined() + "1" + String(repeating: "}", count: 33)
        let tooDeep = error("{\(prefix), \"x\": \(deep)}")?.message ?? ""
        XCTAssertTrue(tooDeep.hasPrefix("path \"/x/k1/k1/") && tooDeep.contains("is 33 levels deep"), tooDeep)
    }

    /// Objects of more keys than an array holds, in reverse and with duplicates: a tree, in
    /// key order, the last duplicate kept.
    func testBigObjectsReadInAnyOrderKeepTheirLastDuplicate() throws {
        let members = (0..<40).reversed().map { "\"k\($0)\": \($0)" } + ["\"k7\": \"again\"", "\"k39\": \"last\""]
        let node = try JSONReader.parse("{" + members.joined(separator: ", ") + "}")
        XCTAssertTrue(node.children.checkInvariants())
        XCTAssertEqual(node.children.count, 40)
        XCTAssertEqual(node.child("k7"), Node("again"))
        XCTAssertEqual(node.child("k39"), Node("last"))
        XCTAssertEqual(node.children.keys.map(\.name), (0..<40).map { "k\($0)" }.sorted())
    }

    /// A value written in pieces is the same bytes as one written whole, whatever the caller
    /// already held.
    func testDrainingWriterGivesTheSameBytes() throws {
        let node = try JSONReader.parse(#"{"a": [1, "x", {"y": "z"}], "b": {"c": true, "d": "\u0001"}, "e": 2.5}"#)
        let whole = JSONWriter.bytes(node, options: .init(export: true))
        for threshold in [0, 1, 7, 30, 1 << 20] {
            var pieces: [[UInt8]] = []
            var buffer = Array("prefix:".utf8)
            JSONWriter.write(node, to: &buffer, options: .init(export: true), draining: threshold) { bytes in
                pieces.append(bytes)
                bytes.removeAll()
            }
            pieces.append(buffer)
            XCTAssertEqual(Array(pieces.joined()), Array("prefix:".utf8) + whole, "threshold \(threshold)")
            if threshold < 30 { XCTAssertGreaterThan(pieces.count, 2) }
        }
    }

    func testNullAndEmptyVanish() throws {
        XCTAssertEqual(try roundTrip(#"{"a": null, "b": {}, "c": {"d": null}}"#), "null")
        XCTAssertEqual(try roundTrip(#"{"a": null, "b": 1}"#), #"{"b":1}"#)
    }

    func testArrays() throws {
        XCTAssertEqual(try roundTrip("[1, 2, 3]"), "[1,2,3]")
        XCTAssertEqual(try roundTrip("[1, null, 3]"), "[1,null,3]")
        // Keys 0..n with max < 2*count render as an array, holes as null.
        XCTAssertEqual(try roundTrip(#"{"0": "a", "2": "c"}"#), #"["a",null,"c"]"#)
        // Too sparse: stays an object.
        XCTAssertEqual(try roundTrip(#"{"0": "a", "5": "c"}"#), #"{"0":"a","5":"c"}"#)
        // Non-canonical or negative integer keys: object.
        XCTAssertEqual(try roundTrip(#"{"0": "a", "01": "b"}"#), #"{"0":"a","01":"b"}"#)
        XCTAssertEqual(try roundTrip(#"{"-1": "a", "0": "b"}"#), #"{"-1":"a","0":"b"}"#)
        // Export form never makes arrays.
        XCTAssertEqual(try roundTrip("[1,2]", export: true), #"{"0":1,"1":2}"#)
        XCTAssertEqual(try roundTrip("[]"), "null")
    }

    func testObjectsInKeyOrder() throws {
        XCTAssertEqual(try roundTrip(#"{"b": 1, "a": 2, "10": 3, "9": 4}"#), #"{"9":4,"10":3,"a":2,"b":1}"#)
        // Duplicate keys: the last wins.
        XCTAssertEqual(try roundTrip(#"{"a": 1, "a": 2}"#), #"{"a":2}"#)
        XCTAssertEqual(try roundTrip(#"{"b": 1, "c": 0, "a": 1, "b": 2, "a": 3}"#), #"{"a":3,"b":2,"c":0}"#)
        // Keys and values beyond ASCII, plain and escaped.
        XCTAssertEqual(try roundTrip(#"{"é": "naïve", "\u00e8": "\ud83d\ude00", "z": "\u007f"}"#), "{\"z\":\"\\u007f\",\"è\":\"😀\",\"é\":\"naïve\"}")
    }

    func testPriorities() throws {
        let json = #"{".priority": 1, "a": {".value": "x", ".priority": "p"}, "b": 2}"#
        XCTAssertEqual(try roundTrip(json, export: true), #"{".priority":1,"a":{".value":"x",".priority":"p"},"b":2}"#)
        XCTAssertEqual(try roundTrip(json), #"{"a":"x","b":2}"#)
        XCTAssertEqual(try JSONReader.parse(json).priority, .number(1))
        XCTAssertThrowsError(try JSONReader.parse(#"{".priority": true, "a": 1}"#))
        XCTAssertThrowsError(try JSONReader.parse(#"{".value": 1, "a": 2}"#))
    }

    func testServerValues() throws {
        XCTAssertEqual(try JSONReader.parse(#"{".sv": "timestamp"}"#).leafValue, .serverValue(.timestamp))
        XCTAssertEqual(try JSONReader.parse(#"{".sv": {"increment": 2}}"#).leafValue, .serverValue(.increment(2)))
        XCTAssertEqual(try roundTrip(#"{"t": {".sv": "timestamp"}}"#), #"{"t":{".sv":"timestamp"}}"#)
        XCTAssertThrowsError(try JSONReader.parse(#"{".sv": "bogus"}"#)) { error in
            XCTAssertTrue("\(error)".contains("unknown server value"), "\(error)")
        }
        XCTAssertThrowsError(try JSONReader.parse(#"{".sv": "timestamp"}"#, options: .init(allowServerValues: false)))
    }

    func error(_ json: String, base: Path = .root) -> JSONParseError? {
        do { _ = try JSONReader.parse(json, options: .init(base: base)); return nil } catch { return error as? JSONParseError }
    }

    func testSyntaxErrorsCarryOffsets() {
        XCTAssertEqual(error(#"{"a": 1,}"#), JSONParseError(message: "expected a key in double quotes, found '}'", offset: 8))
        XCTAssertEqual(error(#"{"a" 1}"#), JSONParseError(message: "expected ':' after the key, found '1'", offset: 5))
        XCTAssertEqual(error("[1 2]"), JSONParseError(message: "expected ',' or ']' in array, found '2'", offset: 3))
        XCTAssertEqual(error("\"abc"), JSONParseError(message: "unterminated string", offset: 0))
        XCTAssertEqual(error("01"), JSONParseError(message: "invalid number: leading zeros are not allowed", offset: 0))
        XCTAssertEqual(error("1 2")?.offset, 2)
        XCTAssertEqual(error("")?.message, "expected a value, found end of input")
        XCTAssertEqual(error("NaN")?.message, "NaN and Infinity are not valid values: numbers must be finite")
        XCTAssertEqual(error("1e999")?.message, "number 1e999 is out of range: numbers must be finite doubles")
        XCTAssertEqual(error(#""\x""#)?.message, "invalid escape '\\x'")
        XCTAssertEqual(error(#""\ud800""#)?.message, "unpaired surrogate in \\u escape")
        XCTAssertEqual(error("\"a\u{1}\"")?.offset, 2)
        XCTAssertEqual(error("tru")?.message, "expected a value, found 't'")
    }

    /// Numbers are computed from their digits where that is exact, and by the general
    /// conversion otherwise: both give, bit for bit, the double the text names.
    func testNumbersOfEveryShapeReadAsTheirNearestDouble() throws {
        var random = SeededRandom(seed: 12)
        var texts = ["0", "-0", "0.0", "-0.0", "1e0", "0e99999999", "9007199254740992", "9007199254740993",
                     "18446744073709551615", "18446744073709551616", "1234567890123456789", "0.1", "0.30000000000000004",
                     "1e22", "1e23", "1e-22", "1e-23", "123456789012345678901234567890e-20", "4.9e-324", "2.2250738585072014e-308",
                     "1.7976931348623157e308", "0.000000000000000000000000001", "100000000000000000000000", "3.14159e+2", "5E-3"]
        func digits(_ count: Int) -> String {
            String((0..<count).map { _ in "0123456789".randomElement(using: &random)! })
        }
        for _ in 0..<20_000 {
            // JSON's integer part: 0, or no leading zero.
            let integer = Int.random(in: 0..<8, using: &random) == 0 ? "0" : String(Int.random(in: 1...9, using: &random)) + digits(Int.random(in: 0...21, using: &random))
            var text = (Bool.random(using: &random) ? "-" : "") + integer
            if Bool.random(using: &random) { text += "." + digits(Int.random(in: 1...20, using: &random)) }
            if Bool.random(using: &random) { text += ["e", "E", "e+", "e-"].randomElement(using: &random)! + String(Int.random(in: 0...40, using: &random)) }
            texts.append(text)
        }
        for text in texts {
            let expected = try XCTUnwrap(Double(text), text)
            guard case .leaf(.number(let read))? = try JSONReader.parse(text).content as Node.Content? else { return XCTFail(text) }
            XCTAssertEqual(read.bitPattern, expected.bitPattern, text)
        }
    }

    /// Strings that are not ASCII are checked as UTF-8 is defined: what the standard library
    /// refuses, the reader refuses, for every sequence of up to three bytes from the ranges
    /// that matter (and, as values, with and without an escape before them).
    func testUTF8IsCheckedAsTheStandardLibraryChecksIt() {
        let interesting: [UInt8] = [0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC,
                                    0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        var sequences: [[UInt8]] = interesting.map { [$0] }
        for a in interesting { for b in interesting { sequences.append([a, b]); for c in interesting { sequences.append([a, b, c]) } } }
        sequences += [[0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],
                      [0xED, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xE0, 0xA0, 0x80], [0xE0, 0x9F, 0xBF]]
        for sequence in sequences {
            let valid = String(validating: sequence, as: UTF8.self) != nil
            for prefix: [UInt8] in [[], [0x5C, UInt8(ascii: "n")]] {
                let bytes = [0x22] + prefix + sequence + [0x22]
                let read = try? JSONReader.parse(data: bytes)
                XCTAssertEqual(read != nil, valid, "\(sequence) after \(prefix)")
                if valid, let read {
                    XCTAssertEqual(read, Node(.string((prefix.isEmpty ? "" : "\n") + String(decoding: sequence, as: UTF8.self))))
                }
            }
        }
    }

    /// A write with a limit adds the same bytes when they fit, and nothing when they do not:
    /// documents and single leaves, plain and in the export form, around the limit.
    func testAWriteWithALimitWritesAllOrNothing() throws {
        let document = try JSONReader.parse(#"{"a": {"b": [1, 2.5, "three"], ".priority": 4}, "c": true, "d": {"e": {"f": "g"}}}"#)
        for node in [document, Node("leaf"), Node(1234), Node(true), Node(.number(7), priority: .string("p"))] {
            for export in [false, true] {
                let whole = JSONWriter.bytes(node, options: .init(export: export))
                for limit in [whole.count + 1, whole.count, whole.count - 1, whole.count / 2, 1, 0] {
                    var out: [UInt8] = [0x20, 0x20]
                    let written = JSONWriter.write(node, to: &out, options: .init(export: export), limit: limit)
                    XCTAssertEqual(written, limit >= whole.count, "\(node) at \(limit)")
                    XCTAssertEqual(out, [0x20, 0x20] + (written ? whole : []), "\(node) at \(limit)")
                }
            }
        }
    }

    func testInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xFF, 0x22]
        XCTAssertThrowsError(try JSONReader.parse(data: bytes)) { error in
            XCTAssertEqual((error as? JSONParseError)?.message, "string is not valid UTF-8")
        }
    }

    func testDataRulesInsideValues() {
        XCTAssertEqual(error(#"{"ok": {"a.b": 1}}"#)?.offset, 8)
        XCTAssertTrue(error(#"{"ok": {"a.b": 1}}"#)!.message.hasPrefix(#"invalid key "a.b" in "/ok/a.b""#))
        XCTAssertTrue(error(#"{"a": 1}"#, base: Path("x/y"))  == nil)
        // Depth counts from the write location.
        let base = Path(keys: (0..<31).map { "k\($0)" })
        XCTAssertNil(error(#"{"a": 1}"#, base: base))
        XCTAssertTrue(error(#"{"a": {"b": 1}}"#, base: base)!.message.contains("33 levels deep"))
        // Path length includes the nested keys.
        let long = String(repeating: "x", count: 760)
        XCTAssertTrue(error(#"{"abcdefghij": 1}"#, base: Path(long))!.message.contains("771 bytes"))
        // A string over 10 MiB.
        let big = "\"" + String(repeating: "a", count: Node.maxStringBytes + 1) + "\""
        XCTAssertTrue(error(big)!.message.contains("limit is 10485760"))
    }

    func testUpdateObject() throws {
        let entries = try JSONReader.parseUpdate(#"{"a/b": 1, "c": null, "d/.priority": 3}"#, base: Path("x"))
        XCTAssertEqual(entries.map(\.0), [Path("a/b"), Path("c"), Path("d/.priority")])
        XCTAssertThrowsError(try JSONReader.parseUpdate(#"{"a/b.c": 1}"#))
        XCTAssertThrowsError(try JSONReader.parseUpdate("[1]"))
        XCTAssertThrowsError(try validateUpdatePaths([(Path("a"), Node(1)), (Path("a/b"), Node(2))], base: .root)) { error in
            XCTAssertTrue("\(error)".contains(#"update paths "a" and "a/b" overlap"#), "\(error)")
        }
    }

    func testPrettyAndStyled() throws {
        let node = try JSONReader.parse(#"{"a": [1, "x"], "b": {"c": true}}"#)
        XCTAssertEqual(JSONWriter.string(node, options: .init(pretty: true)), """
        {
          "a": [
            1,
            "x"
          ],
          "b": {
            "c": true
          }
        }
        """)
        let style = JSONStyle(key: "<k>", string: "<s>", number: "<n>", literal: "<l>", reset: "</>")
        XCTAssertEqual(JSONWriter.string(try JSONReader.parse(#"{"a": [1, "x", null, false]}"#), options: .init(style: style)),
                       #"{<k>"a"</>:[<n>1</>,<s>"x"</>,<l>null</>,<l>false</>]}"#)
    }

    /// `.priority`, `.value` and `.sv` are not keys, but nesting under them is bounded too:
    /// a hostile document cannot exhaust the stack.
    func testNestingUnderNonKeysIsBounded() {
        for opener in [#"{".priority":"#, #"{".value":"#, #"{".sv":"#, "["] {
            let text = String(repeating: opener, count: 100_000) + "1"
            XCTAssertThrowsError(try JSONReader.parse(text), opener) { error in
                XCTAssertTrue("\(error)".contains("levels deep"), "\(error)")
            }
        }
        XCTAssertThrowsError(try JSONValue.parse(String(repeating: "[", count: 100_000)))
    }

    /// A "/" followed by a combining mark is one character to Swift, but still separates keys.
    func testPathsSplitOnTheByte() throws {
        let path = Path("\u{594}/p/q")
        XCTAssertEqual(path.keys, ["\u{594}", "p", "q"])
        XCTAssertEqual(Path(path.description), path)
    }
}
