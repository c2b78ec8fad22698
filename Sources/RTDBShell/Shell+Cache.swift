import Foundation
import RTDBClient
import RTDBData
import RTDBProtocol

/// `pending`, `purge-writes` and `cache`: the queue of writes and the disk cache.
extension Shell {
    func listPending(json: Bool) async {
        let writes = await repo.pendingUserWrites
        let transactions = await repo.pendingTransactionCount
        let unreadable = await repo.unreadableRestoredWrites
        if json {
            let list: [JSONValue] = writes.map { write in
                let (op, value) = Self.describe(write)
                var members: [(String, JSONValue)] = [("op", .string(op)), ("path", .string(write.path.description)), ("value", Self.jsonValue(value, export: true))]
                if case .update(_, _, let guards) = write, !guards.isEmpty {
                    members.append(("guards", .object(guards.map { ($0.path.wireString, .string($0.hash)) })))
                }
                return .object(members)
            }
            output.write(JSONValue.array(list).serialized() + "\n")
            return
        }
        if writes.isEmpty && transactions == 0 && unreadable == 0 {
            output.write("no writes waiting for the server\n")
            return
        }
        for (i, write) in writes.enumerated() {
            let (op, value) = Self.describe(write)
            var text = JSONWriter.string(value, options: JSONWriter.Options(export: true))
            if text.count > 200 { text = String(text.prefix(197)) + "..." }
            var guarded = ""
            if case .update(_, _, let guards) = write, !guards.isEmpty {
                guarded = "  if unchanged: " + guards.map { write.path.appending($0.path).description }.joined(separator: ", ")
            }
            output.write("\(i + 1)  \(op) \(write.path)  \(text)\(guarded)\n")
        }
        if transactions > 0 {
            output.write("and \(transactions) transaction\(transactions == 1 ? "" : "s") (not kept across restarts)\n")
        }
        if unreadable > 0 {
            output.write("and \(unreadable) kept write\(unreadable == 1 ? "" : "s") that could not be read (never sent; purge-writes drops \(unreadable == 1 ? "it" : "them"))\n")
        }
    }

    /// The write as `pending` shows it: `set`, `update` (an object of relative paths) or
    /// `priority`, and its value.
    private static func describe(_ write: Write) -> (String, Node) {
        switch write {
        case let .set(path, value):
            return path.last == ".priority" ? ("priority", value) : ("set", value)
        case let .update(_, updates, _):
            return ("update", updateObject(updates))
        }
    }

    func purgeWrites(force: Bool) async throws -> Outcome {
        // Kept writes that could not be read back are dropped too (they cannot be sent).
        let count = await repo.pendingUserWrites.count + repo.unreadableRestoredWrites
        if count == 0 {
            output.write("no writes to drop\n")
            return .ok
        }
        if !force, let confirm = options.confirm,
           !confirm("drop \(count) write\(count == 1 ? "" : "s") the server has not acknowledged? [y/N] ") {
            output.writeError("nothing dropped\n")
            return .failed
        }
        let dropped = await repo.purgeOutstandingWrites()
        output.write("dropped \(dropped) write\(dropped == 1 ? "" : "s")\n")
        return .ok
    }

    func showCache(clear: Bool, json: Bool) async throws {
        guard let summary = await repo.cacheSummary else {
            throw ShellError(options.server == nil
                ? "an embedded database has no cache: its data is on disk already"
                : "this session keeps no cache (rtdb was started with --no-persistence)")
        }
        if clear {
            await repo.clearCache()
            output.write("cache cleared: reads go to the server again (queued writes stay)\n")
            return
        }
        if json {
            output.write(Self.cacheObject(summary).serialized() + "\n")
            return
        }
        output.write(Self.cacheLine(summary) + "\n")
    }

    static func cacheObject(_ summary: CacheSummary) -> JSONValue {
        .object([("folder", .string(summary.folder)), ("dataBytes", .number(Double(summary.dataBytes))),
                 ("limitBytes", .number(Double(summary.limit))), ("queuedWrites", .number(Double(summary.queuedWrites))),
                 ("error", summary.failure.map(JSONValue.string) ?? .null)])
    }

    static func cacheLine(_ summary: CacheSummary) -> String {
        let writes = summary.queuedWrites
        var line = "\(Outline.humanBytes(summary.dataBytes)) of \(Outline.humanBytes(summary.limit)) cached, "
            + "\(writes) queued write\(writes == 1 ? "" : "s") kept, in \(summary.folder)"
        if let failure = summary.failure { line += " (error: \(failure))" }
        return line
    }
}
