import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBRules

/// A REST stream (`Accept: text/event-stream`): each change at the listened location goes
/// out as a Server-Sent Event — `put` (the data at a relative path is now …) or `patch`
/// (merge these children) — with `keep-alive` every 30 seconds (`ServerSentEvents`);
/// `cancel` and `auth_revoked` end it. With `format=export`, values carry their priorities
/// (`.priority`, `.value`), as a read's do.
final class EventStream: ListenSink, Sendable {
    let path: Path
    let identity: Identity
    private let events: ServerSentEvents
    private let options: JSONWriter.Options

    init(channel: Channel, path: Path, identity: Identity, export: Bool = false) {
        self.events = ServerSentEvents(channel: channel)
        self.path = path
        self.identity = identity
        self.options = JSONWriter.Options(export: export)
    }

    var channel: Channel { events.channel }

    /// `extraHeaders`: CORS headers for a page the server allows.
    func start(version: HTTPVersion, headers extraHeaders: [(String, String)] = []) {
        events.start(version: version, headers: extraHeaders)
    }

    func stop() { events.stop() }

    func send(_ push: Push) {
        switch push {
        case let .data(at, data, _):
            write(event: "put", data: body(at, JSONWriter.string(data, options: options)))
        case let .merge(at, updates, _):
            var object: [UInt8] = [UInt8(ascii: "{")]
            for (i, update) in updates.enumerated() {
                if i > 0 { object.append(UInt8(ascii: ",")) }
                JSONWriter.writeString(update.path.wireString, to: &object)
                object.append(UInt8(ascii: ":"))
                JSONWriter.write(update.value, to: &object, options: options)
            }
            object.append(UInt8(ascii: "}"))
            write(event: "patch", data: body(at, String(decoding: object, as: UTF8.self)))
        case .listenRevoked:
            // The stream ends after these two: the client must listen again (or re-authenticate).
            write(event: "cancel", data: "\"Permission denied\"", thenEnd: true)
        case .authRevoked(_, let reason):
            var data: [UInt8] = []
            JSONWriter.writeString(reason, to: &data)
            write(event: "auth_revoked", data: String(decoding: data, as: UTF8.self), thenEnd: true)
        }
    }

    /// `{"path": "/relative", "data": …}`.
    private func body(_ at: Path, _ data: String) -> String {
        let relative = at.relative(to: path) ?? .root
        var out: [UInt8] = Array("{\"path\":".utf8)
        JSONWriter.writeString(relative.description, to: &out)
        out.append(contentsOf: Array(",\"data\":".utf8))
        return String(decoding: out, as: UTF8.self) + data + "}"
    }

    private func write(event: String, data: String, thenEnd: Bool = false) {
        events.write(event: event, data: data, thenEnd: thenEnd)
    }
}
