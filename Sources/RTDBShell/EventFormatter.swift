import Foundation
import RTDBClient
import RTDBData

/// One line per event: for a person (time, type, key, previous key, data; coloured on a
/// terminal) or for programs (a JSON object per line).
struct EventFormatter {
    var json: Bool
    var color: Bool

    /// `12:00:01.250`: local time to the millisecond, as the live lines (events, operations) show it.
    static let clock: DateFormatter = {
        let f = DateFormatter()
        f.dateFormat = "HH:mm:ss.SSS"
        return f
    }()

    /// `2026-11-28T07:18:17.123Z`: UTC, milliseconds.
    private static let iso = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC") ?? .current)

    /// The members of an event's JSON line, in order (a background watch's start with
    /// "watch", its number).
    static let members = ["time", "event", "path", "key", "prev", "data"]

    func line(_ event: Event, watchID: Int? = nil, at date: Date = Date()) -> String {
        if json {
            var members: [(String, JSONValue)] = [
                ("time", .string(date.formatted(Self.iso))),
                ("event", .string(event.type.rawValue)),
                ("path", .string(event.path.description)),
                ("key", event.key.map(JSONValue.string) ?? .null),
                ("prev", event.previousKey.map(JSONValue.string) ?? .null),
            ]
            if let watchID { members.insert(("watch", .number(Double(watchID))), at: 0) }
            var out = Array(JSONValue.object(members).serialized().utf8)
            out.removeLast()  // the closing brace: data is written as the node's JSON
            out.append(contentsOf: Array(",\"data\":".utf8))
            JSONWriter.write(event.node, to: &out)
            out.append(contentsOf: Array("}".utf8))
            return String(decoding: out, as: UTF8.self)
        }
        let type = event.type.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0)
        let colors: [EventType: String] = [.childAdded: "32", .childRemoved: "31", .childChanged: "33", .childMoved: "35", .value: "36"]
        var text = ""
        if let watchID { text += "[\(watchID)] " }
        text += Self.clock.string(from: date) + "  "
        text += color ? "\u{1B}[\(colors[event.type]!)m\(type)\u{1B}[0m" : type
        text += " " + (event.type == .value ? event.path.description : (event.key ?? ""))
        if let previous = event.previousKey { text += "  after " + previous }
        text += "  " + JSONWriter.string(event.node, options: .init(style: color ? .ansi : nil))
        return text
    }
}
