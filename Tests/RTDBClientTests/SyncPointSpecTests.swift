import Foundation
import Testing
import RTDBData
import RTDBProtocol
@testable import RTDBClient

/// One case of the official SDKs' syncPointSpec.json (read from ../shared/conformance), named
/// after the case so a failure says which.
struct SyncPointSpecCase: Sendable, CustomTestStringConvertible {
    let name: String
    let json: JSONValue
    var testDescription: String { name }

    static var specURL: URL {
        if let dir = ProcessInfo.processInfo.environment["RTDB_CONFORMANCE_DIR"] {
            return URL(fileURLWithPath: dir).appendingPathComponent("syncPointSpec.json")
        }
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repo.deletingLastPathComponent().appendingPathComponent("shared/conformance/syncPointSpec.json")
    }

    /// Every case of the file, or none when it cannot be read (the count test then fails).
    static let all: [SyncPointSpecCase] = {
        guard let text = try? String(contentsOf: specURL, encoding: .utf8),
              case .array(let cases)? = try? JSONValue.parse(text) else { return [] }
        return cases.map { SyncPointSpecCase(name: $0["name"]?.string ?? "?", json: $0) }
    }()
}

/// Drives the sync tree with every case of the spec, once at the paths given and once under
/// foo/bar/baz: one test run per case and base path.
@Suite struct SyncPointSpecTests {
    @Test func theSpecHasEveryCase() {
        #expect(SyncPointSpecCase.all.count == 112, "syncPointSpec.json at \(SyncPointSpecCase.specURL.path)")
    }

    @Test(arguments: SyncPointSpecCase.all, [Path.root, Path("foo/bar/baz")])
    func syncPoint(_ spec: SyncPointSpecCase, under base: Path) throws {
        try SpecRunner(base: base).run(spec.json)
    }
}

struct SpecFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Records listens so a duplicate listen or an unknown unlisten is an error, as in the
/// official harness.
final class RecordingListenProvider: ListenProvider {
    var listens: Set<String> = []
    var problems: [String] = []

    func key(_ query: QuerySpec, _ tag: Int?) -> String { "\(query.path)|\(query.identifier)|\(tag.map(String.init) ?? "")" }

    func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String, complete: @escaping (ResponseStatus) -> [Event]) -> [Event] {
        let k = key(query, tag)
        if listens.contains(k) { problems.append("duplicate listen \(k)") }
        listens.insert(k)
        return []
    }

    func stopListening(_ query: QuerySpec, tag: Int?) {
        let k = key(query, tag)
        if listens.remove(k) == nil { problems.append("stop of unknown listen \(k)") }
    }
}

struct SpecRunner {
    let base: Path

    func path(_ value: JSONValue?) -> Path { base.appending(Path(value?.string ?? "")) }

    func params(_ json: JSONValue?) throws -> QueryParams {
        var p = QueryParams()
        for (name, value) in json?.members ?? [] {
            switch name {
            case "tag": continue
            case "orderBy": p = p.ordered(by: .child(Path(value.string!)))
            case "orderByKey": p = p.ordered(by: .key)
            case "orderByPriority": p = p.ordered(by: .priority)
            case "limitToFirst": p = p.limitToFirst(Int(value.number!))
            case "limitToLast": p = p.limitToLast(Int(value.number!))
            case "startAt", "startAfter", "endAt", "endBefore", "equalTo":
                p = p.bound(named: name, Node(json: value["index"] ?? .null), key: value["name"]?.string)!
            default: throw SpecFailure("unknown query parameter \(name)")
            }
        }
        return p
    }

    func entries(_ json: JSONValue?) -> [(Path, Node)] {
        (json?.members ?? []).map { (Path($0.0), Node(json: $0.1)) }
    }

    func run(_ spec: JSONValue) throws {
        let provider = RecordingListenProvider()
        let tree = SyncTree(listenProvider: provider)
        var registrations: [String: EventRegistration] = [:]
        var listenIDs: [ObjectIdentifier: String] = [:]
        var writeID = 0
        for (i, step) in (spec["steps"]?.array ?? []).enumerated() {
            let type = step["type"]?.string ?? ""
            let expected = step["events"]?.array ?? []
            let where_ = "step \(i + 1) (\(type))"
            switch type {
            case "listen", "unlisten":
                let query = QuerySpec(path: path(step["path"]), params: try params(step["params"]))
                let callbackID = step["callbackId"].map { $0.serialized() }
                if type == "listen" {
                    let registration = callbackID.flatMap { registrations[$0] } ?? EventRegistration(callback: { _ in })
                    if let callbackID { registrations[callbackID] = registration }
                    listenIDs[ObjectIdentifier(registration)] = query.path.description + "|" + query.identifier
                    let events = tree.addRegistration(registration, for: query)
                    try exactMatch(expected, events, where_)
                } else {
                    guard let callbackID, let registration = registrations[callbackID] else { throw SpecFailure("\(where_): unknown callbackId") }
                    let cancelled = tree.removeRegistration(registration, for: query)
                    if !cancelled.isEmpty || !expected.isEmpty { throw SpecFailure("\(where_): unexpected cancel events") }
                }
            case "serverUpdate":
                let node = Node(json: step["data"] ?? .null)
                let events = step["tag"]?.number.map { tree.applyTaggedOverwrite(path(step["path"]), node, tag: Int($0)) }
                    ?? tree.applyServerOverwrite(path(step["path"]), node)
                try setMatch(expected, events, listenIDs, where_)
            case "serverMerge":
                let merge = entries(step["data"])
                let events = step["tag"]?.number.map { tree.applyTaggedMerge(path(step["path"]), merge, tag: Int($0)) }
                    ?? tree.applyServerMerge(path(step["path"]), merge)
                try setMatch(expected, events, listenIDs, where_)
            case "set":
                let events = tree.applyUserOverwrite(path(step["path"]), Node(json: step["data"] ?? .null), writeID: writeID,
                                                     visible: step["visible"]?.bool ?? true)
                writeID += 1
                try setMatch(expected, events, listenIDs, where_)
            case "update":
                let events = tree.applyUserMerge(path(step["path"]), entries(step["data"]), writeID: writeID)
                writeID += 1
                try setMatch(expected, events, listenIDs, where_)
            case "ackUserWrite":
                let events = tree.ackUserWrite(Int(step["writeId"]?.number ?? -1), revert: step["revert"]?.bool ?? false)
                try setMatch(expected, events, listenIDs, where_)
            case "suppressWarning":
                continue
            default:
                throw SpecFailure("\(where_): unknown step type")
            }
            if let problem = provider.problems.first { throw SpecFailure("\(where_): \(problem)") }
        }
    }

    func matches(_ expected: JSONValue, _ event: Event) -> Bool {
        guard expected["type"]?.string == event.type.rawValue else { return false }
        if event.type != .value {
            guard expected["name"]?.string == event.key else { return false }
            if event.type != .childRemoved && expected["prevName"]?.string != event.previousKey { return false }
        }
        return Node(json: expected["data"] ?? .null).hashString == event.node.hashString
    }

    func describe(_ events: [Event]) -> String {
        events.map { "\($0.type.rawValue) \($0.path) \($0.key ?? "-") prev=\($0.previousKey ?? "nil") \(JSONWriter.string($0.node, options: .init(export: true)))" }
            .joined(separator: "; ")
    }

    func exactMatch(_ expected: [JSONValue], _ actual: [Event], _ where_: String) throws {
        guard expected.count == actual.count else {
            throw SpecFailure("\(where_): expected \(expected.count) events, got \(actual.count): \(describe(actual))")
        }
        for (e, a) in zip(expected, actual) where !matches(e, a) {
            throw SpecFailure("\(where_): expected \(e.serialized()), got \(describe([a]))")
        }
    }

    /// Events grouped by listener location in the listed order; within a group any order,
    /// but each listener's event types in the order removed, added, moved, changed, value.
    func setMatch(_ expected: [JSONValue], _ actual: [Event], _ listenIDs: [ObjectIdentifier: String], _ where_: String) throws {
        guard expected.count == actual.count else {
            throw SpecFailure("\(where_): expected \(expected.count) events, got \(actual.count): \(describe(actual))")
        }
        let ordering: [EventType] = [.childRemoved, .childAdded, .childMoved, .childChanged, .value]
        var remainingExpected = expected[...]
        var remainingActual = actual[...]
        while let first = remainingExpected.first {
            let groupPath = path(first["path"])
            let size = remainingExpected.prefix { path($0["path"]) == groupPath }.count
            var pool = Array(remainingExpected.prefix(size))
            var lastType: [String: Int] = [:]
            for event in remainingActual.prefix(size) {
                guard event.path == groupPath else {
                    throw SpecFailure("\(where_): event for \(event.path) where \(groupPath) was expected: \(describe(actual))")
                }
                let listener = listenIDs[ObjectIdentifier(event.registration)] ?? ""
                let rank = ordering.firstIndex(of: event.type)!
                if let previous = lastType[listener], previous > rank {
                    throw SpecFailure("\(where_): \(event.type.rawValue) after a later kind of event: \(describe(actual))")
                }
                lastType[listener] = rank
                guard let match = pool.firstIndex(where: { matches($0, event) }) else {
                    throw SpecFailure("\(where_): unexpected event \(describe([event])); all: \(describe(actual))")
                }
                pool.remove(at: match)
            }
            remainingExpected = remainingExpected.dropFirst(size)
            remainingActual = remainingActual.dropFirst(size)
        }
    }
}
