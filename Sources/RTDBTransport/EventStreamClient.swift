import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import RTDBData
import RTDBProtocol
import Synchronization

/// A GET answered with Server-Sent Events (`Accept: text/event-stream`), read as they come:
/// the profiler's stream (`monitor`, `profile`). The events end when the server ends the
/// response or the consumer stops reading (the connection is then closed).
public enum EventStreamClient {
    public struct Event: Sendable, Equatable {
        public var name: String
        public var data: String

        public init(name: String, data: String) {
            self.name = name
            self.data = data
        }
    }

    /// One event's data may be at most this long.
    public static let maxEventBytes = 16 << 20
    /// Events waiting for their reader, at most.
    public static let maxWaiting = 10_000

    /// Connects (within `timeout`) and returns the events; a refusal (a status other than
    /// 200) is thrown with the server's `error`. With `unixSocket`, the request goes to that
    /// socket, `host` and `port` then only name it in the `Host` header.
    public static func open(host: String, port: Int, unixSocket: String? = nil, target: String, headers: [(String, String)] = [],
                            tls: NIOSSLContext?, group: EventLoopGroup, timeout: TimeInterval) async throws -> AsyncThrowingStream<Event, Error> {
        let name = unixSocket ?? "\(host):\(port)"
        // A reader that falls behind loses events (told in a `dropped` event) rather than
        // hold the server's stream in memory.
        let (events, continuation) = AsyncThrowingStream<Event, Error>.makeStream(bufferingPolicy: .bufferingOldest(maxWaiting))
        let started = Start(group.next().makePromise(of: Void.self))
        let channel: Channel
        do {
            channel = try await HTTPClient.connect(host: host, port: port, unixSocket: unixSocket, tls: tls, group: group, timeout: timeout) {
                Reader(started: started, continuation: continuation)
            }
        } catch {
            started.complete(.failure(error))
            throw error
        }
        continuation.onTermination = { _ in channel.close(promise: nil) }
        let deadline = channel.eventLoop.scheduleTask(in: .milliseconds(Int64(timeout * 1000))) {
            started.complete(.failure(WireError("\(name) did not answer within \(Int(timeout)) seconds")))
            channel.close(promise: nil)
        }
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target)
        head.headers.add(name: "Host", value: port == (tls == nil ? 80 : 443) ? host : "\(host):\(port)")
        head.headers.add(name: "Accept", value: "text/event-stream")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        do {
            // Ctrl-C while the server has not answered yet ends the wait.
            try await withTaskCancellationHandler {
                try await started.promise.futureResult.get()
            } onCancel: {
                started.complete(.failure(CancellationError()))
                channel.close(promise: nil)
            }
            deadline.cancel()
        } catch {
            deadline.cancel()
            channel.close(promise: nil)
            throw error
        }
        return events
    }

    /// Reads the response: its status (a refusal's body becomes the error), then the
    /// events, line by line. On its channel's event loop.
    fileprivate final class Reader: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        private let started: Start
        private let continuation: AsyncThrowingStream<Event, Error>.Continuation
        private var status = 0
        private var refusal: [UInt8] = []
        private var line: [UInt8] = []
        private var event = "message"
        private var data: [String] = []
        private var dataBytes = 0

        init(started: Start, continuation: AsyncThrowingStream<Event, Error>.Continuation) {
            self.started = started
            self.continuation = continuation
        }

        func channelRead(context: ChannelHandlerContext, data part: NIOAny) {
            switch unwrapInboundIn(part) {
            case .head(let head):
                status = Int(head.status.code)
                if status == 200 { started.complete(.success(())) }
            case .body(let buffer):
                if status != 200 {
                    if refusal.count < 64 << 10 { refusal.append(contentsOf: buffer.readableBytesView.prefix(64 << 10)) }
                    return
                }
                for byte in buffer.readableBytesView {
                    if byte == UInt8(ascii: "\n") {
                        take(line, context)
                        line.removeAll(keepingCapacity: true)
                    } else if line.count < EventStreamClient.maxEventBytes {
                        line.append(byte)
                    }
                }
            case .end:
                if status != 200 {
                    let text = String(decoding: refusal, as: UTF8.self)
                    let reason = (try? JSONValue.parse(text))?["error"]?.string ?? "HTTP \(status)"
                    started.complete(.failure(EventStreamClient.Refusal(status: status, reason: reason)))
                }
                continuation.finish()
                context.close(promise: nil)
            }
        }

        /// One line of the stream: a field, or the blank line that ends an event.
        private func take(_ bytes: [UInt8], _ context: ChannelHandlerContext) {
            var text = String(decoding: bytes, as: UTF8.self)
            if text.hasSuffix("\r") { text.removeLast() }
            if text.isEmpty {
                if !data.isEmpty { yield(Event(name: event, data: data.joined(separator: "\n"))) }
                event = "message"
                data = []
                dataBytes = 0
                return
            }
            guard let colon = text.firstIndex(of: ":") else { return }
            var value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
            switch text[..<colon] {
            case "event": event = String(value)
            case "data":
                dataBytes += value.utf8.count
                guard dataBytes <= EventStreamClient.maxEventBytes else {
                    continuation.finish(throwing: WireError("an event is larger than \(EventStreamClient.maxEventBytes >> 20) MiB"))
                    return context.close(promise: nil)
                }
                data.append(String(value))
            default: break
            }
        }

        /// Events the full buffer refused, said (as a `dropped` event of the profiler's
        /// stream) before the next one it takes.
        private var lost = 0

        private func yield(_ next: Event) {
            if lost > 0 {
                guard case .enqueued = continuation.yield(Event(name: "dropped", data: "\(lost) events were dropped: this reader fell behind")) else {
                    lost = lost.addingSaturated(1)
                    return
                }
                lost = 0
            }
            if case .dropped = continuation.yield(next) { lost = lost.addingSaturated(1) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            started.complete(.failure(WireError("the connection closed before the server answered")))
            continuation.finish()
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            started.complete(.failure(WireError("\(error)")))
            continuation.finish(throwing: WireError("\(error)"))
            context.close(promise: nil)
        }
    }

    /// Whether the server took the request, said once (whichever of the answer, the deadline
    /// and the connection's end comes first).
    fileprivate final class Start: Sendable {
        let promise: EventLoopPromise<Void>
        private let said = Mutex(false)

        init(_ promise: EventLoopPromise<Void>) { self.promise = promise }

        func complete(_ result: Result<Void, Error>) {
            let first = said.withLock { said in
                defer { said = true }
                return !said
            }
            if first { promise.completeWith(result) }
        }
    }

    /// The server answered with a status other than 200.
    public struct Refusal: Error, CustomStringConvertible {
        public let status: Int
        public let reason: String
        public var description: String { reason }
    }
}

@available(*, unavailable)
extension EventStreamClient.Reader: Sendable {}
