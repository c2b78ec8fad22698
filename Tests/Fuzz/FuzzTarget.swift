import Foundation
import NIOHTTP1
import RTDBData
@testable import RTDBEngine
import RTDBProtocol
import RTDBRules
@testable import RTDBServer
import RTDBShell

/// A property that does not hold for an input (a crash is caught by the signal handler).
struct PropertyFailure: Error, CustomStringConvertible {
    let description: String
}

/// One reader of untrusted bytes and what must hold for any input: no trap, and where the
/// reader accepts an input, what it makes survives a round trip.
struct FuzzTarget: Sendable {
    let name: String
    let run: @Sendable ([UInt8]) throws -> Void

    static let all: [FuzzTarget] = [json, wire, frames, rest, shell, rules, ruleCost, store]

    /// A data folder's files as a crash or a bad disk may leave them: a log's records (each
    /// with its writer's origin) and a head (with its table of applied writes). Reading
    /// either never traps, and what reads back is written again the same.
    static let store = FuzzTarget(name: "store") { input in
        try input.withUnsafeBytes { raw in
            var offset = 0
            while case .record(let record, let next) = LogRecord.decode(raw, at: offset) {
                var bytes: [UInt8] = []
                record.encode(into: &bytes)
                let again = bytes.withUnsafeBytes { LogRecord.decode($0, at: 0) }
                guard case .record(let same, _) = again, same == record else {
                    throw PropertyFailure(description: "a log record does not read back as itself")
                }
                offset = next
            }
            _ = LogRecord.nextRecord(raw, after: 0)
        }
        guard let head = try? FolderHead.decode(input, path: "HEAD") else { return }
        guard (try? FolderHead.decode(head.encode(), path: "HEAD")) == head else {
            throw PropertyFailure(description: "a head does not read back as itself")
        }
    }

    /// A rules document (the owner's PUT /.settings/rules.json) and a credential (its first
    /// line, anyone's): loading either never traps, and rules that load are evaluated for
    /// reads and writes without trapping, by no one, a user and the owner.
    static let rules = FuzzTarget(name: "rules") { input in
        let text = String(decoding: input, as: UTF8.self)
        let firstLine = String(text.prefix { $0 != "\n" })
        _ = try? Identity.from(credential: firstLine, now: 1_800_000_000)
        guard let rules = try? SecurityRules(parsing: text) else { return }
        let data = (try? JSONReader.parse(#"{"users": {"ada": {"name": "Ada", "age": 36}}, "notes": {"n1": {"text": "hi"}}, "admins": {"ada": true}}"#)) ?? .empty
        let identities: [Identity] = [.anonymous, .user(uid: "ada", claims: .object([("sub", .string("ada")), ("admin", .bool(true))]), expires: nil), .admin]
        let query = QueryParams().ordered(by: .child(Path("age"))).startAt(Node(1)).limitToFirst(5)
        for identity in identities {
            for path in [Path.root, Path("users/ada"), Path("users/ada/name"), Path("notes/n1/text"), Path("x/y/.priority")] {
                _ = rules.canRead(path, identity: identity, query: nil, data: data, now: 1e12)
                _ = rules.canRead(path, identity: identity, query: query, data: data, now: 1e12)
                for value in [Node.empty, Node("x"), Node(3), data] {
                    let after = data.setting(path, to: value)
                    _ = rules.checkWrite([(path, value)], identity: identity, before: data, after: after, now: 1e12)
                }
            }
            _ = rules.indexOn(at: Path("users"))
        }
    }

    /// Rules, then after a line `---` a string written where they apply: whatever the
    /// patterns and the string, a request's rules end within their evaluation budget. The
    /// bound is time, generous for a debug build (the budget is about a quarter of a second
    /// of matching in a release build, a few seconds in a debug one).
    static let ruleCost = FuzzTarget(name: "rule-cost") { input in
        let text = String(decoding: input, as: UTF8.self)
        let parts = text.components(separatedBy: "\n---\n")
        guard let rules = try? SecurityRules(parsing: parts[0]) else { return }
        let value = Node(parts.dropFirst().joined(separator: "\n---\n"))
        let user = Identity.user(uid: "ada", claims: .object([("sub", .string("ada"))]), expires: nil)
        for path in [Path("x"), Path("users/ada/name"), Path("a/b")] {
            let after = Node.empty.setting(path, to: value)
            let start = Date()
            _ = rules.checkWrite([(path, value)], identity: user, before: .empty, after: after, now: 1e12)
            _ = rules.canRead(path, identity: user, query: nil, data: after, now: 1e12)
            let took = Date().timeIntervalSince(start)
            if took > 15 { throw PropertyFailure(description: "one request's rules took \(String(format: "%.1f", took)) s at \(path)") }
        }
    }

    /// JSON to a Node: anything accepted is written back as JSON that reads as the same node.
    static let json = FuzzTarget(name: "json") { input in
        try input.withUnsafeBufferPointer { bytes in
            _ = try? JSONValue.parse(bytes: bytes, capturing: ["d"])
            _ = try? JSONReader.parse(bytes: bytes, options: .init(dropNonFiniteNumbers: true))
            _ = try? JSONReader.parseUpdate(bytes: bytes, base: Path("a/b"))
            guard let node = try? JSONReader.parse(bytes: bytes) else { return }
            for options in [JSONWriter.Options(export: true), JSONWriter.Options(export: false, pretty: true)] {
                let written = JSONWriter.bytes(node, options: options)
                guard let again = try? JSONReader.parse(data: written) else {
                    throw PropertyFailure(description: "the writer made JSON the reader refuses: \(String(decoding: written, as: UTF8.self).prefix(200))")
                }
                if options.export && again != node { throw PropertyFailure(description: "export JSON does not read back as the same node") }
            }
        }
        // Kept as a document (big containers left as text), the same input reads as the
        // same value, with the same error when refused, and writes the same bytes.
        var documentOptions = JSONReader.Options()
        documentOptions.documentsFrom = 0
        let whole = Result { try input.withUnsafeBufferPointer { try JSONReader.parse(bytes: $0) } }
        let document = Result { try JSONReader.parse(data: input, options: documentOptions) }
        switch (whole, document) {
        case let (.success(a), .success(b)):
            guard a == b, b == a else { throw PropertyFailure(description: "a document reads as another value") }
            for options in [JSONWriter.Options(export: true), JSONWriter.Options()] where JSONWriter.bytes(a, options: options) != JSONWriter.bytes(b, options: options) {
                throw PropertyFailure(description: "a document writes other bytes (export: \(options.export))")
            }
            guard a.hashString == b.hashString else { throw PropertyFailure(description: "a document hashes otherwise") }
            guard !b.containsServerValues else { return }  // resolved before any record
            let record = LogRecord(sets: [(Path("a"), b)])
            var encoded: [UInt8] = []
            record.encode(into: &encoded)
            guard case .record(let back, _) = encoded.withUnsafeBytes({ LogRecord.decode($0, at: 0) }), back == record else {
                throw PropertyFailure(description: "a document's log record does not read back")
            }
        case let (.failure(a), .failure(b)):
            guard "\(a)" == "\(b)" else { throw PropertyFailure(description: "a document is refused otherwise: \(b) for \(a)") }
        default:
            throw PropertyFailure(description: "a document is read where the whole value is not, or the other way")
        }
    }

    /// Realtime messages: anything decoded encodes to bytes that decode and encode the same.
    static let wire = FuzzTarget(name: "wire") { input in
        let message = input.withUnsafeBufferPointer { bytes -> Message? in try? WireCodec.decode(bytes: bytes) }
        guard let message else { return }
        let encoded = WireCodec.encode(message)
        guard let again = try? WireCodec.decode(encoded) else {
            throw PropertyFailure(description: "an encoded message does not decode: \(encoded.prefix(200))")
        }
        if WireCodec.encode(again) != encoded { throw PropertyFailure(description: "encoding is not stable: \(encoded.prefix(200))") }
        let frames = WireFraming.frames(for: encoded)
        for frame in frames where frame.utf16.count > WireFraming.maxFrame {
            throw PropertyFailure(description: "a frame of \(frame.utf16.count) units")
        }
        if (frames.count == 1 ? frames : Array(frames.dropFirst())).joined() != encoded {
            throw PropertyFailure(description: "frames do not join to the message")
        }
    }

    /// Count frames and parts, one frame per line.
    static let frames = FuzzTarget(name: "frames") { input in
        var assembler = WireFraming.Assembler()
        for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            _ = try? assembler.receive(String(decoding: line, as: UTF8.self))
        }
    }

    /// A REST request's target, Host, Origin and body (one per line, the body last), read as
    /// the server reads them.
    static let rest = FuzzTarget(name: "rest") { input in
        let lines = input.split(separator: UInt8(ascii: "\n"), maxSplits: 3, omittingEmptySubsequences: false).map { Array($0) }
        let target = String(decoding: lines.first ?? [], as: UTF8.self)
        let host = lines.count > 1 ? String(decoding: lines[1], as: UTF8.self) : nil
        let origin = lines.count > 2 ? String(decoding: lines[2], as: UTF8.self) : nil
        let body = lines.count > 3 ? lines[3] : []
        let (rawPath, items) = RESTRouter.split(target)
        _ = RESTRouter.redacted(target)
        _ = try? RESTRouter.path(fromTarget: rawPath)
        _ = try? RESTQuery.params(items)
        _ = RESTRouter.namespace(fromHost: host)
        let policy = AccessPolicy()
        _ = policy.refusal(host: host)
        _ = policy.refusal(origin: origin)
        body.withUnsafeBufferPointer { bytes in
            _ = try? JSONReader.parse(bytes: bytes, options: .init(base: Path("x")))
            _ = try? JSONReader.parseUpdate(bytes: bytes, base: Path("x"))
        }
    }

    /// A line typed in the shell. `@` is taken out: it names a file to read.
    static let shell = FuzzTarget(name: "shell") { input in
        let line = String(decoding: input.map { $0 == UInt8(ascii: "@") ? UInt8(ascii: "a") : $0 }, as: UTF8.self)
        _ = try? CommandParser.parse(line, cwd: Path("a/b"))
    }
}
