import NIOCore

/// Where an HTTP connection is, as `HTTPHandler` tells `RequestDeadline` (outbound user events).
enum HTTPPhase {
    /// A request head arrived; its body may follow.
    case headReceived
    /// The whole request arrived: the server is working on it.
    case requestComplete
    /// The response went out: the connection waits for another request (keep-alive).
    case responseSent
    /// An event stream or a WebSocket: long-lived, with its own rules.
    case longLived
}

/// Closes HTTP connections that hold the server without finishing a request (slowloris and
/// its kin): a request head must arrive whole within `headTimeout` of its first byte; a body
/// may pause at most `bodyIdleTimeout` between reads and take `bodyTimeout` in all; a
/// keep-alive connection with no request for `idleTimeout` is closed. Time the server spends
/// answering is never counted against the client.
final class RequestDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    struct Limits {
        var headTimeout = TimeAmount.seconds(30)
        var bodyIdleTimeout = TimeAmount.seconds(30)
        var bodyTimeout = TimeAmount.minutes(10)
        var idleTimeout = TimeAmount.seconds(60)
    }

    private enum State {
        case idle(since: NIODeadline)
        case head(started: NIODeadline)
        case body(started: NIODeadline, lastRead: NIODeadline)
        case busy
        case longLived
    }

    private let limits: Limits
    private var state: State = .idle(since: .now())
    private var timer: RepeatedTask?

    init(limits: Limits = Limits()) { self.limits = limits }

    func handlerAdded(context: ChannelHandlerContext) {
        // Runs on the channel's event loop; `handlerRemoved` cancels it, ending the capture.
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            bound.value.handler.check(context: bound.value.context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = NIODeadline.now()
        switch state {
        case .idle: state = .head(started: now)
        case .body(let started, _): state = .body(started: started, lastRead: now)
        default: break
        }
        context.fireChannelRead(data)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let phase = event as? HTTPPhase else {
            return context.triggerUserOutboundEvent(event, promise: promise)
        }
        let now = NIODeadline.now()
        switch phase {
        case .headReceived: state = .body(started: now, lastRead: now)
        case .requestComplete: state = .busy
        case .responseSent: if case .busy = state { state = .idle(since: now) }
        case .longLived: state = .longLived
        }
        promise?.succeed(())
    }

    private func check(context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        switch state {
        case .idle(let since) where now - since > limits.idleTimeout:
            context.close(promise: nil)
        case .head(let started) where now - started > limits.headTimeout:
            timeOut(context)
        case .body(let started, let lastRead) where now - lastRead > limits.bodyIdleTimeout || now - started > limits.bodyTimeout:
            timeOut(context)
        default:
            break
        }
    }

    /// 408, then close: the request took too long to arrive.
    private func timeOut(_ context: ChannelHandlerContext) {
        state = .busy
        let body = #"{"error":"the request did not arrive in time"}"#
        let text = "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        var buffer = context.channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        context.writeAndFlush(wrapOutboundOut(buffer)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
