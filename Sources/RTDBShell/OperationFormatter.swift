import Foundation
import RTDBData
import RTDBProtocol

/// One line per operation a monitor hears: for a person (time, client, address, user,
/// operation, path and query, bytes, time on the server, the rules' verdict) or for programs
/// (the profiler's JSON, as the server streams it).
struct OperationFormatter {
    var json: Bool
    var color: Bool

    /// `12:00:01.250  c4Xk2Q 127.0.0.1:51234 ada  realtime-write /users/ada  in 27 B  180 µs  allowed`.
    func line(_ record: OperationRecord, watchID: Int? = nil) -> String {
        if json {
            let bytes = record.jsonBytes
            guard let watchID else { return String(decoding: bytes, as: UTF8.self) }
            return "{\"watch\":\(watchID)," + String(decoding: bytes.dropFirst(), as: UTF8.self)
        }
        let time = EventFormatter.clock.string(from: Date(timeIntervalSince1970: record.timestamp / 1000))
        var who = "-"
        if let client = record.client {
            let user = client.owner ? "owner" : client.user.map(Self.uid) ?? "no-one"
            who = Self.word(client.id == "rest" ? "rest" : String(client.id.prefix(6))) + " " + Self.word(client.address) + " " + user
        }
        var text = (watchID.map { "[\($0)] " } ?? "") + time + "  " + who + "  " + paint(record.kind.rawValue, Self.colors(record.kind))
        if let path = record.path {
            text += " " + Self.printable(path.description)
            if let query = record.query, !query.isDefault { text += " " + Self.printable(query.identifier) }
        }
        switch record.kind {
        case .connect, .disconnect, .unlisten: break
        case .broadcast: text += "  out \(Outline.humanBytes(record.bytes)) to \(record.clientsUpdated ?? 0) client\(record.clientsUpdated == 1 ? "" : "s")"
        default: text += "  \(record.kind.isWrite ? "in" : "out") \(Outline.humanBytes(record.bytes))"
        }
        if record.kind != .connect && record.kind != .disconnect { text += "  \(record.micros) µs" }
        if let allowed = record.allowed { text += "  " + (allowed ? "allowed" : paint("DENIED", "31")) }
        if record.unindexed { text += "  " + paint("unindexed", "33") }
        return text
    }

    /// A uid as it is, unless it could be taken for something else (`owner`, `no-one`, more
    /// than one word, characters a terminal acts on): then quoted, as JSON quotes it.
    static func uid(_ uid: String) -> String {
        let plain = uid != "owner" && uid != "no-one" && !uid.isEmpty && uid.unicodeScalars.allSatisfy { !isControl($0) && $0 != " " && $0 != "\"" }
        return plain ? uid : JSONValue.string(uid).serialized()
    }

    /// A word from the server (an address, a connection): quoted unless plain.
    static func word(_ text: String) -> String {
        text.unicodeScalars.allSatisfy { !isControl($0) && $0 != " " } && !text.isEmpty ? text : JSONValue.string(text).serialized()
    }

    /// `text` with the characters a terminal acts on written as escapes.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        return String(text.unicodeScalars.map { isControl($0) ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// What a monitor that fell behind lost.
    static func dropped(_ count: Int) -> String {
        "\(count) operation\(count == 1 ? " was" : "s were") dropped: the monitor fell behind the database"
    }

    private static func colors(_ kind: OperationRecord.Kind) -> String {
        switch kind {
        case .connect, .disconnect: return "35"
        case .broadcast: return "36"
        default: return kind.isWrite ? "33" : "32"
        }
    }

    private func paint(_ text: String, _ code: String) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
