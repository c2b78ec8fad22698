import Foundation
import RTDBData
import RTDBProtocol

/// One line per operation a monitor hears: for a person (time, client, address, user,
/// operation, path and query, bytes, time on the server, the rules' verdict) or for programs
/// (the profiler's JSON, as the server streams it).
struct OperationFormatter {
    var json: Bool
    var color: Bool

    private static let clock: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter
    }()

    /// `12:00:01.250  c4Xk2Q 127.0.0.1:51234 ada  realtime-write /users/ada  in 27 B  180 µs  allowed`.
    func line(_ record: OperationRecord, watchID: Int? = nil) -> String {
        if json {
            let bytes = record.jsonBytes
            guard let watchID else { return String(decoding: bytes, as: UTF8.self) }
            return "{\"watch\":\(watchID)," + String(decoding: bytes.dropFirst(), as: UTF8.self)
        }
        let time = Self.clock.string(from: Date(timeIntervalSince1970: record.timestamp / 1000))
        var who = "-"
        if let client = record.client {
            who = (client.id == "rest" ? "rest" : String(client.id.prefix(6))) + " " + client.address + " " + (client.user ?? "no-one")
        }
        var text = (watchID.map { "[\($0)] " } ?? "") + time + "  " + who + "  " + paint(record.kind.rawValue, Self.colors(record.kind))
        if let path = record.path {
            text += " " + path.description
            if let query = record.query, !query.isDefault { text += " " + query.identifier }
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
