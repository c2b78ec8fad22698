import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// A response of Server-Sent Events on a channel: its head, events written as they come
/// (`event: NAME`, `data: TEXT`), a `keep-alive` event every 30 seconds until stopped, and
/// an end that closes the connection.
final class ServerSentEvents: Sendable {
    let channel: Channel
    /// Started with the response; cancelled when it ends.
    private let keepAlive = NIOLockedValueBox<RepeatedTask?>(nil)

    init(channel: Channel) {
        self.channel = channel
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

    /// Writes events (each `event:` and `data:` lines, then a blank one) in one flush;
    /// `thenEnd` ends the response and closes the connection after them. `written` is told
    /// once the socket took them (or the connection failed).
    func write(events: [(event: String, data: String)], thenEnd: Bool = false, written: (@Sendable () -> Void)? = nil) {
        var text = ""
        for (event, data) in events { text += "event: \(event)\ndata: \(data)\n\n" }
        let bytes = Array(text.utf8)
        let channel = self.channel
        if thenEnd { stop() }
        channel.eventLoop.execute {
            let promise = written.map { told in
                let promise = channel.eventLoop.makePromise(of: Void.self)
                promise.futureResult.whenComplete { _ in told() }
                return promise
            }
            channel.writeBody(bytes, promise: promise)
            channel.flush()
            if thenEnd {
                channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }

    func write(event: String, data: String, thenEnd: Bool = false) {
        write(events: [(event, data)], thenEnd: thenEnd)
    }
}
