import NIOCore
import NIOHTTP1

/// Bounds what the server holds for one connection that does not read: a WebSocket listener
/// or an event stream whose peer stopped reading, or reads slower than its data changes.
///
/// Bytes written but not yet taken by the socket are counted. One answer (the writes up to a
/// flush: a large read's body in pieces, one event, one message's frames) may be of any
/// size; a write while more than `limit` bytes of earlier answers, besides the largest of
/// them, still wait, or bytes
/// waiting with no progress for `stallTimeout`, close the connection, rather than let one
/// slow peer exhaust the server's memory. (A peer that reads nothing cannot be sent a
/// goodbye; the server's log says why.)
final class OutboundBudget: ChannelOutboundHandler, RemovableChannelHandler {
    // Written since the last flush: the answer being written now.
    private var unflushed = 0
    // The largest answer flushed since nothing was waiting: it may be of any size, so the
    // smaller ones after it are not refused while it drains (a large read, then its `ok`).
    private var largest = 0
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    static let defaultLimit = 32 << 20
    static let defaultStallTimeout = TimeAmount.seconds(60)

    private let limit: Int
    private let stallTimeout: TimeAmount
    private let log: @Sendable (String) -> Void
    private var waiting = 0
    private var lastProgress = NIODeadline.now()
    private var timer: RepeatedTask?
    private var closed = false

    init(limit: Int = OutboundBudget.defaultLimit, stallTimeout: TimeAmount = OutboundBudget.defaultStallTimeout,
         log: @escaping @Sendable (String) -> Void) {
        self.limit = limit
        self.stallTimeout = stallTimeout
        self.log = log
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Runs on the channel's event loop; `handlerRemoved` cancels it, ending the capture.
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(5), delay: .seconds(5)) { _ in
            let (handler, context) = bound.value
            guard handler.waiting > 0, NIODeadline.now() - handler.lastProgress > handler.stallTimeout else { return }
            handler.overflow(context, "its peer has read nothing for \(handler.stallTimeout.nanoseconds / 1_000_000_000) s")
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if closed {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        let size = unwrapOutboundIn(data).readableBytes
        if waiting == 0 { lastProgress = .now() }
        if size > 0 && waiting - unflushed - largest > limit {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return overflow(context, "more than \(limit >> 20) MiB is waiting for its peer to read")
        }
        waiting += size
        unflushed += size
        let done = promise ?? context.eventLoop.makePromise()
        done.futureResult.assumeIsolated().whenComplete { [weak self] _ in
            guard let self else { return }
            self.waiting -= size
            self.unflushed = min(self.unflushed, self.waiting)
            if self.waiting == 0 { self.largest = 0 }
            self.lastProgress = .now()
        }
        context.write(data, promise: done)
    }

    func flush(context: ChannelHandlerContext) {
        largest = max(largest, unflushed)
        unflushed = 0
        context.flush()
    }

    private func overflow(_ context: ChannelHandlerContext, _ reason: String) {
        guard !closed else { return }
        closed = true
        log("closing the connection from \(context.channel.remoteAddress?.description ?? "?"): \(reason)")
        context.close(promise: nil)
    }
}

extension Channel {
    /// The size of the pieces a large HTTP body is written in, so `OutboundBudget` sees a
    /// slow reader's progress piece by piece rather than only at the end of one huge write.
    static var bodyPieceSize: Int { 256 << 10 }

    /// Writes `bytes` as HTTP body parts of at most `bodyPieceSize` (on the event loop);
    /// `promise` completes with the last one.
    func writeBody(_ bytes: [UInt8], promise: EventLoopPromise<Void>? = nil) {
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + Self.bodyPieceSize)
            var buffer = allocator.buffer(capacity: end - start)
            buffer.writeBytes(bytes[start..<end])
            write(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: end == bytes.count ? promise : nil)
            start = end
        }
        if bytes.isEmpty { promise?.succeed() }
    }
}
