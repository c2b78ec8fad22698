import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// When accepting fails for want of descriptors or memory, stops accepting for a moment.
///
/// Waiting connections keep the listening socket readable; with the failed accept still
/// pending, the event loop would be woken for it again at once, spinning a core while normal
/// clients time out. Turning automatic reads off takes the socket out of the poll set; they
/// are turned on again after `pause`, when closed connections may have freed descriptors.
final class AcceptPause: ChannelInboundHandler {
    typealias InboundIn = Channel
    typealias InboundOut = Channel

    private let pause: TimeAmount
    private let log: @Sendable (String) -> Void
    private var paused = false
    private var lastLogged: NIODeadline?

    init(pause: TimeAmount = .milliseconds(250), log: @escaping @Sendable (String) -> Void) {
        self.pause = pause
        self.log = log
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard let io = error as? IOError, [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(io.errnoCode) else {
            return context.fireErrorCaught(error)
        }
        guard !paused else { return }
        paused = true
        let now = NIODeadline.now()
        if lastLogged.map({ now - $0 > .seconds(10) }) ?? true {
            lastLogged = now
            log("cannot accept connections: \(io.description); pausing accepts (more descriptors: raise ulimit -n)")
        }
        let channel = context.channel
        channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        context.eventLoop.assumeIsolated().scheduleTask(in: pause) { [weak self] in
            self?.paused = false
            channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        }
    }
}
