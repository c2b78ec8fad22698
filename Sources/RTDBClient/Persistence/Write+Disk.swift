import RTDBData
import RTDBProtocol

/// A user's write as the disk queue keeps it: its kind, its path, and its value in the
/// export form (priorities kept; server values unresolved, as they will be sent).
extension Write {
    var kindCode: Int64 {
        switch self {
        case .set: return 0
        case .update(_, _, let guards): return guards.isEmpty ? 1 : 2
        }
    }

    /// A set's value in the export form (priorities kept); an update as an object of
    /// relative paths; a guarded update as `{"d": that object, "h": {path: hash}}`, as the
    /// wire writes its body.
    var encodedValue: [UInt8] {
        let export = JSONWriter.Options(export: true)
        switch self {
        case .set(_, let node):
            return JSONWriter.bytes(node, options: export)
        case .update(_, let updates, let guards):
            var out: [UInt8] = []
            if !guards.isEmpty { out.append(contentsOf: Array(#"{"d":"#.utf8)) }
            out.append(UInt8(ascii: "{"))
            for (i, update) in updates.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.writeString(update.path.wireString, to: &out)
                out.append(UInt8(ascii: ":"))
                JSONWriter.write(update.value, to: &out, options: export)
            }
            out.append(UInt8(ascii: "}"))
            if !guards.isEmpty {
                out.append(contentsOf: Array(#","h":"#.utf8))
                JSONValue.object(guards.map { ($0.path.wireString, .string($0.hash)) }).write(to: &out)
                out.append(UInt8(ascii: "}"))
            }
            return out
        }
    }

    /// Reads back what `encodedValue` wrote; nil for anything else.
    init?(kindCode: Int64, path text: String, value: [UInt8]) {
        let path = Path(text)
        guard (try? path.validate(allowInfo: false, allowPriorityLast: true)) != nil else { return nil }
        switch kindCode {
        case 0:
            guard let node = try? JSONReader.parse(data: value, options: JSONReader.Options(base: path)) else { return nil }
            self = .set(path, node)
        case 1:
            guard let entries = try? JSONReader.parseUpdate(String(decoding: value, as: UTF8.self), base: path) else { return nil }
            self = .update(path, entries.map { UpdateEntry($0.0, $0.1) })
        case 2:
            let parsed = value.withUnsafeBufferPointer { try? JSONValue.parse(bytes: $0, capturing: ["d"]) }
            guard let parsed, let range = parsed.captured, let members = parsed.value["h"]?.members, !members.isEmpty,
                  let entries = try? JSONReader.parseUpdate(String(decoding: value[range], as: UTF8.self), base: path) else { return nil }
            var guards: [UpdateGuard] = []
            for (key, hash) in members {
                guard let hash = hash.string, (try? path.appending(Path(key)).validate()) != nil else { return nil }
                guards.append(UpdateGuard(Path(key), hash: hash))
            }
            self = .update(path, entries.map { UpdateEntry($0.0, $0.1) }, guards: guards)
        default:
            return nil
        }
    }
}
