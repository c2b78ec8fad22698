import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBRules

/// A REST stream (`Accept: text/event-stream`): each change at the listened location goes
/// out as a Server-Sent Event — `put` (the data at a relative path is now …) or `patch`
/// (merge these children) — with `keep-alive` every 30 seconds; `cancel` and `auth_revoked`
/// end it.
final class EventStream: ListenSink, Sendable {
    let channel: Channel
    let path: Path
    let identity: Identity
    /// Started by whoever starts the stream; cancelled when it ends (its channel closes, or
    /// `cancel` or `auth_revoked` ends it).
    private let keepAlive = NIOLockedValueBox<RepeatedTask?>(nil)

    init(channel: Channel, path: Path, identity: Identity) {
        self.channel = channel
        self.path = path
        self.identity = identity
    }

    /// `extraHeaders`: CORS headers for a page the server allows.
    func start(version: HTTPVersion, headers extraHeaders: [(String, String)] = []) {
        var head = HTTPHeaders()
        head.add(name: "Content-Type", value: "text/event-stream")
        head.add(name: "Cache-Control", value: "no-cache")
        for (name, value) in extraHeaders { head.add(name: name, value: value) }
        let headers = head
        let channel = self.channel
        channel.eventLoop.execute {
            channel.writeAndFlush(HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: .ok, headers: headers)), promise: nil)
        }
        let task = channel.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(30), delay: .seconds(30)) { [weak self] _ in
            self?.write(event: "keep-alive", data: "null")
        }
        keepAlive.withLockedValue { $0 = task }
    }

    func stop() { keepAlive.withLockedValue { $0?.cancel() } }

    func send(_ push: Push) {
        switch push {
        case let .data(at, data, _):
            write(event: "put", data: body(at, JSONWriter.string(data)))
        case let .merge(at, updates, _):
            var object: [UInt8] = [UInt8(ascii: "{")]
            for (i, update) in updates.enumerated() {
                if i > 0 { object.append(UInt8(ascii: ",")) }
                JSONWriter.writeString(update.path.wireString, to: &object)
                object.append(UInt8(ascii: ":"))
                JSONWriter.write(update.value, to: &object)
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
        let text = "event: \(event)\ndata: \(data)\n\n"
        let channel = self.channel
        if thenEnd { stop() }
        channel.eventLoop.execute {
            channel.writeBody(Array(text.utf8))
            channel.flush()
            if thenEnd {
                channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}
