import XCTest
import RTDBData
import RTDBTestSupport
@testable import RTDBProtocol

/// Exact bytes on the wire, as in the official exchange (protocol-reference.md §2.7).
final class WireCodecTests: XCTestCase {
    func testEncodesTheOfficialExchange() {
        XCTAssertEqual(WireCodec.encode(.handshake(Handshake(timestamp: 1700000000000, host: "127.0.0.1:9000", sessionID: "sess1"))),
                       #"{"t":"c","d":{"t":"h","d":{"ts":1700000000000,"v":"5","h":"127.0.0.1:9000","s":"sess1"}}}"#)
        XCTAssertEqual(WireCodec.encode(.request(id: 1, .stats(["sdk.js.11-0-0": 1]))),
                       #"{"t":"d","d":{"r":1,"a":"s","b":{"c":{"sdk.js.11-0-0":1}}}}"#)
        XCTAssertEqual(WireCodec.encode(.request(id: 2, .listen(path: Path("/items"), query: nil, tag: nil, hash: ""))),
                       #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/items","h":""}}}"#)
        XCTAssertEqual(WireCodec.encode(.response(id: 1, .ok)), #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}"#)
        XCTAssertEqual(WireCodec.encode(.push(.data(path: Path("items"), data: try! JSONReader.parse(#"{"a":1}"#), tag: nil))),
                       #"{"t":"d","d":{"a":"d","b":{"p":"items","d":{"a":1}}}}"#)
        XCTAssertEqual(WireCodec.encode(.request(id: 3, .put(path: Path("/items/b"), data: Node(2), hash: nil))),
                       #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/items/b","d":2}}}"#)
        XCTAssertEqual(WireCodec.encode(.push(.data(path: Path("items/b"), data: Node(2), tag: nil))),
                       #"{"t":"d","d":{"a":"d","b":{"p":"items/b","d":2}}}"#)
        XCTAssertEqual(WireCodec.encode(.ping), #"{"t":"c","d":{"t":"p","d":{}}}"#)
        XCTAssertEqual(WireCodec.encode(.pong), #"{"t":"c","d":{"t":"o","d":{}}}"#)
    }

    /// With a limit, a message that fits is the same bytes, and one that does not is nil:
    /// every message kind, and data of every size around the limit.
    func testEncodingWithALimit() throws {
        let list = Node(children: ChildMap(sorted: (0..<300).map { (ChildKey("k\(100 + $0)"), Node(String(repeating: "v", count: $0 % 50))) }))
        let messages: [Message] = [
            .response(id: 3, .value(list)), .response(id: 4, .value(Node("text"))), .response(id: 5, .ok),
            .push(.data(path: Path("a/b"), data: list, tag: 7)), .push(.data(path: Path("a"), data: Node(12.5), tag: nil)),
            .push(.merge(path: Path("a"), data: [UpdateEntry(Path("x/y"), list)], tag: nil)),
            .request(id: 6, .put(path: Path("p"), data: list, hash: nil)), .handshake(Handshake(timestamp: 1, host: "h", sessionID: "s")),
        ]
        for message in messages {
            let whole = WireCodec.encodeBytes(message)
            for limit in [whole.count + 1, whole.count, whole.count - 1, whole.count / 2, 10, 0] {
                let limited = WireCodec.encodeBytes(message, limit: limit)
                XCTAssertEqual(limited, limit >= whole.count ? whole : nil, "\(message) at \(limit) of \(whole.count)")
            }
        }
    }

    func testQueriesTagsMergesAndErrors() {
        let query = QueryParams().ordered(by: .child(Path("lastModified"))).limitToLast(4)
        XCTAssertEqual(WireCodec.encode(.request(id: 7, .listen(path: Path("notes"), query: query, tag: 3, hash: "abc="))),
                       #"{"t":"d","d":{"r":7,"a":"q","b":{"p":"/notes","q":{"l":4,"vf":"r","i":"lastModified"},"t":3,"h":"abc="}}}"#)
        XCTAssertEqual(query.identifier, #"{"i":"lastModified","l":4,"vf":"r"}"#)
        let bounded = QueryParams().ordered(by: .value).startAfter(Node(5)).endAt(Node("z"), key: "k")
        XCTAssertEqual(bounded.wireObject.serialized(), #"{"sp":5,"sn":"[MAX_NAME]","sin":false,"ep":"z","en":"k","ein":true,"i":".value"}"#)
        XCTAssertEqual(WireCodec.encode(.push(.merge(path: Path("a"), data: [UpdateEntry(Path("b/c"), Node(1)), UpdateEntry(Path("d"), .empty)], tag: 2))),
                       #"{"t":"d","d":{"a":"m","b":{"p":"a","d":{"b/c":1,"d":null},"t":2}}}"#)
        XCTAssertEqual(WireCodec.encode(.response(id: 9, .error("datastale", "the data changed"))),
                       #"{"t":"d","d":{"r":9,"b":{"s":"datastale","d":"the data changed"}}}"#)
        XCTAssertEqual(WireCodec.encode(.push(.data(path: .root, data: Node(.string("x"), priority: .number(1)), tag: nil))),
                       #"{"t":"d","d":{"a":"d","b":{"p":"","d":{".value":"x",".priority":1}}}}"#)
    }

    func testAuthRevocation() throws {
        let revoked = Message.push(.authRevoked(status: "expired_token", reason: "Auth token is expired."))
        let wire = #"{"t":"d","d":{"a":"ac","b":{"s":"expired_token","d":"Auth token is expired."}}}"#
        XCTAssertEqual(WireCodec.encode(revoked), wire)
        XCTAssertEqual(try WireCodec.decode(wire), revoked)
    }

    func testRoundTrips() throws {
        let messages: [Message] = [
            .request(id: 4, .put(path: Path("a/b"), data: try JSONReader.parse(#"{"x": {".sv": "timestamp"}, ".priority": 2}"#), hash: "h=")),
            .request(id: 5, .merge(path: Path("a"), data: [UpdateEntry(Path("x/y"), Node(true)), UpdateEntry(Path("z"), .empty)])),
            .request(id: 6, .listen(path: Path("q"), query: QueryParams().ordered(by: .key).startAt(Node("b")).limitToFirst(2), tag: 1, hash: "")),
            .request(id: 7, .unlisten(path: Path("q"), query: nil, tag: nil)),
            .request(id: 8, .get(path: Path("g"), query: nil)),
            .request(id: 9, .get(path: Path("g"), query: QueryParams().ordered(by: .child(Path("x"))).limitToFirst(2))),
            .response(id: 4, Response(status: "ok", data: try JSONReader.parse(#"{"a": 1}"#))),
            .response(id: 5, .error("permission_denied", "no")),
            .push(.merge(path: Path("m"), data: [UpdateEntry(Path("a"), Node(1))], tag: nil)),
            .push(.listenRevoked(path: Path("c"), query: QueryParams().limitToFirst(1))),
            .reset(host: "s-1.example"), .shutdown(reason: "bye"), .serverError("oops"),
        ]
        for message in messages {
            XCTAssertEqual(try WireCodec.decode(WireCodec.encode(message)), message, WireCodec.encode(message))
        }
    }

    /// rtdb's cut query (`dp`): read, written and part of the query's identity.
    func testACutQueryRoundTrips() throws {
        let wire = #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/a","q":{"l":50,"vf":"l","i":".key","dp":1},"t":3,"h":""}}}"#
        guard case .request(2, .listen(_, let query?, 3, _), _) = try WireCodec.decode(wire) else { return XCTFail("not a listen") }
        XCTAssertEqual(query.depth, 1)
        XCTAssertEqual(query.identifier, #"{"dp":1,"i":".key","l":50,"vf":"l"}"#)
        XCTAssertEqual(WireCodec.encode(.request(id: 2, .listen(path: Path("a"), query: query, tag: 3, hash: ""))), wire)
    }

    func testBadInputIsAClearError() {
        func error(_ text: String) -> WireError? {
            do { _ = try WireCodec.decode(text); return nil } catch { return error as? WireError }
        }
        XCTAssertEqual(error("{")?.message.hasPrefix("message is not JSON"), true)
        XCTAssertEqual(error(#"{"t":"x","d":{}}"#), WireError("unknown message layer \"x\""))
        XCTAssertEqual(error(#"{"t":"d","d":{"r":3,"a":"zz","b":{}}}"#), WireError("unknown action \"zz\"", requestID: 3))
        XCTAssertEqual(error(#"{"t":"d","d":{"r":4,"a":"p","b":{"d":1}}}"#), WireError("the request needs a path \"p\"", requestID: 4))
        XCTAssertEqual(error(#"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a","d":{"b.c":1}}}}"#)?.message.hasPrefix(#"invalid data for /a: invalid key "b.c""#), true)
        XCTAssertEqual(error(#"{"t":"d","d":{"r":6,"a":"p","b":{"p":"/a#b","d":1}}}"#)?.requestID, 6)
        for bad in [#"{"l":-5,"vf":"r"}"#, #"{"l":0}"#, #"{"l":1.5}"#, #"{"l":"x"}"#, #"{"vf":"x"}"#, #"{"sp":{"a":1}}"#, #"{"i":""}"#,
                    #"{"l":5,"dp":0}"#, #"{"l":5,"dp":33}"#, #"{"l":5,"dp":"1"}"#] {
            let text = #"{"t":"d","d":{"r":7,"a":"q","b":{"p":"/a","q":"# + bad + #","t":1,"h":""}}}"#
            XCTAssertEqual(error(text)?.requestID, 7, bad)
        }
    }

    func testFraming() throws {
        XCTAssertEqual(WireFraming.frames(for: "short"), ["short"])
        let long = String(repeating: "é🐵", count: 6000)  // 18,000 UTF-16 units
        let frames = WireFraming.frames(for: long)
        XCTAssertEqual(frames.first, "2")
        XCTAssertTrue(frames.dropFirst().allSatisfy { $0.utf16.count <= 16384 })
        let pairs = WireFraming.frames(for: "a" + String(repeating: "🐵", count: 8192))
        XCTAssertEqual(pairs.map(\.utf16.count), [1, 16383, 2], "a surrogate pair is never split")
        XCTAssertEqual(WireFraming.frames(for: String(repeating: "a", count: 16384)).count, 1)
        XCTAssertEqual(WireFraming.frames(for: String(repeating: "a", count: 16385)), ["2", String(repeating: "a", count: 16384), "a"])
        // Runs of ASCII (counted eight bytes at a time) between wider characters: every frame
        // is as full as it can be without splitting a character, and they join to the text.
        var rng = SeededRandom(seed: 3)
        for _ in 0..<15 {
            var text = ""
            while text.utf16.count < 40_000 {
                text += String(repeating: "x", count: Int(rng.next() % 30))
                text += ["é", "€", "🐵", "a"][Int(rng.next() % 4)]
            }
            let frames = WireFraming.frames(for: text)
            let parts = frames.count == 1 ? frames : Array(frames.dropFirst())
            XCTAssertEqual(frames.count == 1 ? nil : Int(frames[0]), frames.count == 1 ? nil : parts.count)
            XCTAssertEqual(parts.joined(), text)
            for (part, next) in zip(parts, parts.dropFirst()) {
                XCTAssertLessThanOrEqual(part.utf16.count, 16384)
                XCTAssertGreaterThan(part.utf16.count + String(next.unicodeScalars.first.map(Character.init) ?? " ").utf16.count, 16384)
            }
        }
        var assembler = WireFraming.Assembler()
        XCTAssertNil(try assembler.receive("0"), "keepalive")
        var joined: [UInt8]?
        for frame in frames { joined = try assembler.receive(frame) ?? joined }
        XCTAssertEqual(joined, Array(long.utf8))
        XCTAssertEqual(try assembler.receive(#"{"t":"c","d":{"t":"p","d":{}}}"#), Array(#"{"t":"c","d":{"t":"p","d":{}}}"#.utf8))
        // The room a message is joined in follows what arrived, not what a count announced
        // or a first part promised: 4,000 parts after one of 16 KiB promise 64 MB.
        XCTAssertNil(try assembler.receive("4000"))
        XCTAssertNil(try assembler.receive(String(repeating: "x", count: 16384)))
        var small: [UInt8]?
        for _ in 1..<4000 { small = try assembler.receive("y") ?? small }
        let message = try XCTUnwrap(small)
        XCTAssertEqual(message.count, 16384 + 3999)
        XCTAssertLessThanOrEqual(message.capacity, 2 * message.count)
    }

    /// The usual puts, merges and acknowledgements are read without the envelope's JSON tree,
    /// and every message, taken that way or not, reads as the whole reading makes it: the
    /// same message, or the same error, for these and for each of them damaged at random.
    func testTheShortcutReadsWhatTheWholeReadingReads() throws {
        func both(_ bytes: [UInt8]) -> (String, String) {
            func outcome(_ read: () throws -> Message) -> String {
                do { return "\(try read())" } catch let error as WireError { return "error \(error.message) \(String(describing: error.requestID))" } catch {
                    return "error \(error)"
                }
            }
            return (outcome { try WireCodec.decode(bytes) },
                    outcome { try bytes.withUnsafeBufferPointer { try WireCodec.decodeEnvelope(bytes: $0, owner: bytes) } })
        }
        let big = "{" + (0..<5000).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        let common: [String] = [
            #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a/b","d":1}}}"#,
            #"{"t":"d","d":{"r":12,"a":"p","b":{"p":"a","d":{"x":[1,2,{"y":"z"}],"é":"ü"}}}}"#,
            #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/a","d":{".sv":"timestamp"},"h":"abc="}}}"#,
            #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/a","d":{"x/y":1,"z":null}}}}"#,
            #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a/.priority","d":2}}}"#,
            #"{"t":"d","d":{"r":6,"a":"p","b":{"p":"/l","d":\#(big)},"o":{"c":"client-1","f":3}}}"#,
            #"{"t":"d","d":{"r":7,"a":"p","b":{"p":"/a","d":null}}}"#,
            #"{"t":"d","d":{"r":0,"b":{"s":"ok","d":""}}}"#,
        ]
        for text in common {
            let bytes = Array(text.utf8)
            XCTAssertNotNil(bytes.withUnsafeBufferPointer { WireCodec.decodeCommon(bytes: $0, owner: bytes) }, text)
            let (shortcut, whole) = both(bytes)
            XCTAssertEqual(shortcut, whole, text)
        }
        // Forms left to the whole reading, and mistakes it words.
        let others: [String] = [
            #"{"t":"d","d":{"a":"p","r":1,"b":{"p":"/a","d":1}}}"#, #"{ "t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":1}}}"#,
            #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a\u0062","d":1}}}"#, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a#","d":1}}}"#,
            #"{"t":"d","d":{"r":01,"a":"p","b":{"p":"/a","d":1}}}"#, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":1}}}}"#,
            #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":{"a":}}}}"#, #"{"t":"d","d":{"r":1,"a":"m","b":{"p":"/a","d":1}}}"#,
            #"{"t":"d","d":{"r":9,"a":"p","b":{"p":"/a","d":1},"o":{"c":"","f":0}}}"#,
            #"{"t":"d","d":{"r":9,"a":"p","b":{"p":"/a","d":1},"o":{"c":"x","f":10}}}"#,
            #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":"","x":1}}}"#, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":1,"h":"x"},"t":"c"}}"#,
        ]
        for text in others {
            let bytes = Array(text.utf8)
            let (shortcut, whole) = both(bytes)
            XCTAssertEqual(shortcut, whole, text)
        }
        var rng = SeededRandom(seed: 11)
        for text in common + others where text.utf8.count < 1000 {
            for _ in 0..<300 {
                var bytes = Array(text.utf8)
                let at = Int(rng.next() % UInt64(bytes.count))
                let replacements = Array(#"{}[]",:0123456789aphdrt\ "#.utf8), insertions = Array(#"{}",:1a\"#.utf8)
                switch rng.next() % 3 {
                case 0: bytes[at] = replacements[Int(rng.next() % UInt64(replacements.count))]
                case 1: bytes.remove(at: at)
                default: bytes.insert(insertions[Int(rng.next() % UInt64(insertions.count))], at: at)
                }
                let (shortcut, whole) = both(bytes)
                XCTAssertEqual(shortcut, whole, String(decoding: bytes, as: UTF8.self))
            }
        }
    }

    /// Numbers that do not fit where the protocol wants an integer are errors, never traps,
    /// in every message either end decodes.
    func testNumbersThatAreNotIntegersAreErrors() {
        for n in ["1e300", "-1e300", "9.3e18", "-9.3e18", "1.5", "1e19"] {
            let texts = [
                #"{"t":"d","d":{"r":N,"a":"p","b":{"p":"/a","d":1}}}"#,
                #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/a","t":N,"h":""}}}"#,
                #"{"t":"d","d":{"r":1,"a":"n","b":{"p":"/a","t":N}}}"#,
                #"{"t":"d","d":{"r":N,"b":{"s":"ok","d":""}}}"#,
                #"{"t":"d","d":{"a":"d","b":{"p":"a","d":1,"t":N}}}"#,
                #"{"t":"d","d":{"a":"m","b":{"p":"a","d":{"b":1},"t":N}}}"#,
                #"{"t":"c","d":{"t":"h","d":{"ts":N,"v":"5","h":"x","s":"y"}}}"#,
                #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/a","q":{"l":N},"h":""}}}"#,
            ]
            // A timestamp may have a fraction (it is rounded); it must still fit.
            for text in texts.map({ $0.replacingOccurrences(of: "N", with: n) }) where !(n == "1.5" && text.contains("ts")) {
                XCTAssertThrowsError(try WireCodec.decode(text), text)
            }
            // Counters that are not integers are left out.
            XCTAssertEqual(try WireCodec.decode(#"{"t":"d","d":{"r":1,"a":"s","b":{"c":{"x":N,"y":2}}}}"#.replacingOccurrences(of: "N", with: n)),
                           .request(id: 1, .stats(["y": 2])))
        }
        XCTAssertEqual(try WireCodec.decode(#"{"t":"c","d":{"t":"h","d":{"ts":1.7e12,"v":"5","h":"x","s":"y"}}}"#),
                       .handshake(Handshake(timestamp: 1_700_000_000_000, host: "x", sessionID: "y")))
    }

    /// `g` answers carry a value, `null` included; write acknowledgements carry `""`.
    func testReadAnswersAndAcknowledgements() throws {
        XCTAssertEqual(WireCodec.encode(.response(id: 1, .value(.empty))), #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":null}}}"#)
        XCTAssertEqual(WireCodec.encode(.response(id: 1, .value(Node("")))), #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}"#)
        XCTAssertEqual(try WireCodec.decode(#"{"t":"d","d":{"r":1,"b":{"s":"ok","d":null}}}"#), .response(id: 1, .value(.empty)))
        XCTAssertEqual(try WireCodec.decode(#"{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}"#), .response(id: 1, .ok))
        XCTAssertEqual(WireCodec.encode(.request(id: 2, .get(path: Path("/a"), query: QueryParams().ordered(by: .child(Path("x"))).limitToFirst(2)))),
                       #"{"t":"d","d":{"r":2,"a":"g","b":{"p":"/a","q":{"l":2,"vf":"l","i":"x"}}}}"#)
    }

    /// A put or an onDisconnect at `PATH/.priority` (setPriority) is legal; elsewhere `.priority` is not a key.
    func testPriorityAsTheLastKeyOfAWrite() throws {
        XCTAssertEqual(try WireCodec.decode(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a/.priority","d":5}}}"#),
                       .request(id: 1, .put(path: Path("/a/.priority"), data: Node(5), hash: nil)))
        XCTAssertThrowsError(try WireCodec.decode(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/.priority/a","d":5}}}"#))
        XCTAssertThrowsError(try WireCodec.decode(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/a/.priority","h":""}}}"#))
    }

    /// Data is read once from the message's bytes, with the database's rules, wherever it is.
    func testDataIsCheckedInEveryMessage() {
        XCTAssertThrowsError(try WireCodec.decode(#"{"t":"d","d":{"r":1,"a":"m","b":{"p":"/a","d":{"b":{"c$":1}}}}}"#))
        XCTAssertThrowsError(try WireCodec.decode(#"{"t":"d","d":{"r":1,"a":"m","b":{"p":"/a","d":5}}}"#))
        XCTAssertThrowsError(try WireCodec.decode(#"{"t":"d","d":{"a":"d","b":{"p":"a","d":{"x":1e999}}}}"#))
        XCTAssertThrowsError(try WireCodec.decode(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":"\ud800"}}}"#))
        // Member order does not matter: the path may come after the data.
        XCTAssertEqual(try WireCodec.decode(#"{"t":"d","d":{"b":{"d":{"x":"}]"},"p":"/a"},"a":"p","r":3}}"#),
                       .request(id: 3, .put(path: Path("/a"), data: Node(children: ChildMap(unsorted: [(ChildKey("x"), Node("}]"))])), hash: nil)))
    }

    /// Long messages are bounded: a count frame above the limit, or parts adding up to more
    /// than the largest message, are errors before anything large is kept.
    func testAssemblerBounds() {
        var assembler = WireFraming.Assembler()
        XCTAssertThrowsError(try assembler.receive("999999"))
        XCTAssertNoThrow(try assembler.receive("2000"))
        let piece = String(repeating: "x", count: 16384)
        var thrown = false
        for _ in 0..<2000 {
            do { _ = try assembler.receive(piece) } catch { thrown = true; break }
        }
        XCTAssertTrue(thrown)
        XCTAssertEqual(try assembler.receive("{}"), Array("{}".utf8), "the assembler starts afresh after an error")
    }

    /// A hello's clock must be a time since 1970 a client can compute with.
    /// rtdb's own server offers to apply each named write once; a write names its origin.
    func testTheExactlyOnceOfferAndAWritesOrigin() throws {
        let hello = Message.handshake(Handshake(timestamp: 5, host: "h", sessionID: "s", exactlyOnce: true))
        XCTAssertEqual(WireCodec.encode(hello), #"{"t":"c","d":{"t":"h","d":{"ts":5,"v":"5","h":"h","s":"s","once":true}}}"#)
        XCTAssertEqual(try WireCodec.decode(WireCodec.encode(hello)), hello)
        let write = Message.request(id: 7, .put(path: Path("a"), data: Node(1), hash: nil), origin: WriteOrigin(client: "c-1", floor: 5))
        XCTAssertEqual(WireCodec.encode(write), #"{"t":"d","d":{"r":7,"a":"p","b":{"p":"/a","d":1},"o":{"c":"c-1","f":5}}}"#)
        XCTAssertEqual(try WireCodec.decode(WireCodec.encode(write)), write)
        func error(_ origin: String) -> WireError? {
            do { _ = try WireCodec.decode(#"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/a","d":1},"o":"# + origin + "}}"); return nil } catch { return error as? WireError }
        }
        let badClient = WireError("a write's origin \"o\" needs a client \"c\" of 1 to 64 bytes", requestID: 2)
        let badFloor = WireError("a write's origin \"o\" needs a floor \"f\", an integer from 0 to the request's number", requestID: 2)
        XCTAssertEqual(error(#"{"c":"","f":1}"#), badClient)
        XCTAssertEqual(error(#"{"c":"\#(String(repeating: "x", count: 65))","f":1}"#), badClient)
        XCTAssertEqual(error(#"{"c":7,"f":1}"#), badClient)
        XCTAssertEqual(error(#"{"c":"x","f":-1}"#), badFloor)
        XCTAssertEqual(error(#"{"c":"x"}"#), badFloor)
        XCTAssertEqual(error(#"{"c":"x","f":3}"#), badFloor, "above the request's own number")
        for r in ["-1", "4611686018427387904"] {
            let text = #"{"t":"d","d":{"r":"# + r + #","a":"p","b":{"p":"/a","d":1},"o":{"c":"x","f":0}}}"#
            XCTAssertThrowsError(try WireCodec.decode(text), r)
        }
        XCTAssertEqual(error(#"{"c":"x","f":1.5}"#), WireError("\"f\" must be an integer", requestID: 2))
    }

    /// rtdb's own server checks a merge's guards, and says so; a guarded merge carries them
    /// beside its data, relative to its path, and is not taken by the shortcut reading.
    func testGuardedMerges() throws {
        let hello = Message.handshake(Handshake(timestamp: 5, host: "h", sessionID: "s", exactlyOnce: true, guardedMerge: true))
        XCTAssertEqual(WireCodec.encode(hello), #"{"t":"c","d":{"t":"h","d":{"ts":5,"v":"5","h":"h","s":"s","once":true,"guards":true}}}"#)
        XCTAssertEqual(try WireCodec.decode(WireCodec.encode(hello)), hello)
        let merge = Message.request(id: 3, .merge(path: Path("a"), data: [UpdateEntry(Path("c"), Node(1)), UpdateEntry(Path("b"), .empty)],
                                                  guards: [UpdateGuard(Path("b"), hash: "xyz="), UpdateGuard(Path("c"), hash: ""), UpdateGuard(.root, hash: "r")]))
        XCTAssertEqual(WireCodec.encode(merge), #"{"t":"d","d":{"r":3,"a":"m","b":{"p":"/a","d":{"c":1,"b":null},"h":{"b":"xyz=","c":"","":"r"}}}}"#)
        XCTAssertEqual(try WireCodec.decode(WireCodec.encode(merge)), merge)
        XCTAssertEqual(try WireCodec.decode(#"{"t":"d","d":{"r":3,"a":"m","b":{"p":"/a","d":{"c":1},"h":null}}}"#),
                       .request(id: 3, .merge(path: Path("a"), data: [UpdateEntry(Path("c"), Node(1))])))
        func error(_ guards: String) -> WireError? {
            do { _ = try WireCodec.decode(#"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/a","d":{"c":1},"h":"# + guards + "}}}"); return nil } catch { return error as? WireError }
        }
        XCTAssertEqual(error("[]"), WireError("a merge's guards \"h\" must be an object of paths to hashes", requestID: 4))
        XCTAssertEqual(error(#"{"c":5}"#), WireError("the guard of c must be a hash (a string)", requestID: 4))
        XCTAssertEqual(error(#"{"c$":"x"}"#)?.message.hasPrefix("invalid guard path c$:"), true)
        // Each guard costs the server a hash: a few, each path once.
        let many = "{" + (0...UpdateGuard.maximumCount).map { #""k\#($0)":"x""# }.joined(separator: ",") + "}"
        XCTAssertEqual(error(many), WireError("a merge takes at most 16 guards \"h\", each path once", requestID: 4))
        XCTAssertEqual(error(#"{"":"x","":"y"}"#), WireError("a merge takes at most 16 guards \"h\", each path once", requestID: 4))
    }

    func testHandshakeTimestampsOutsideAnyClockAreErrors() {
        for ts in ["-1", "-1e12", "1e16", "9.2e18"] {
            XCTAssertThrowsError(try WireCodec.decode(#"{"t":"c","d":{"t":"h","d":{"ts":TS,"v":"5","h":"x","s":"y"}}}"#.replacingOccurrences(of: "TS", with: ts)), ts)
        }
    }
}
