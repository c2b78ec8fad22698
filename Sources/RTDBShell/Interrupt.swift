import Foundation
import Glibc

/// Ctrl-C for the command that is running: the one mechanism by which a long command (a
/// read waiting for the server, a foreground watch, the wait for an offline write) stops.
/// The command runs in a task of its own; SIGINT or SIGTERM cancels that task, and so does
/// the reader of standard output going away (`rtdb watch … | head`).
public enum Interrupt {
    /// Runs `operation` in its own task, cancelled by Ctrl-C or by the caller's cancellation.
    /// `interrupted` runs (on another thread) when a signal cancels it.
    @MainActor
    public static func cancellable<T: Sendable>(interrupted: @escaping @Sendable () -> Void = {},
                                                _ operation: @escaping @MainActor () async -> T) async -> T {
        let task = Task { @MainActor in await operation() }
        Watcher.shared.arm {
            interrupted()
            task.cancel()
        }
        defer { Watcher.shared.disarm() }
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Watches the interrupt pipe on a thread of its own while a command runs; between
    /// commands it sleeps and leaves the pipe to the line editor.
    ///
    /// `@unchecked Sendable`: its state is guarded by `condition`, held while the pipe is
    /// drained, so once `disarm` returns the line editor is the pipe's only reader.
    private final class Watcher: @unchecked Sendable {
        static let shared = Watcher()

        private let condition = NSCondition()
        private var cancel: (@Sendable () -> Void)?

        private init() {
            InterruptPipe.install()
            let thread = Thread { [self] in watch() }
            thread.name = "rtdb.interrupt"
            thread.start()
        }

        func arm(_ cancel: @escaping @Sendable () -> Void) {
            condition.withLock {
                self.cancel = cancel
                condition.signal()
            }
        }

        func disarm() {
            condition.withLock { cancel = nil }
        }

        private func watch() {
            while true {
                condition.lock()
                while cancel == nil { condition.wait() }
                condition.unlock()
                var fd = pollfd(fd: InterruptPipe.readEnd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&fd, 1, 100)
                condition.lock()
                guard let cancel else {
                    condition.unlock()
                    continue
                }
                let interrupted = ready > 0 && InterruptPipe.drain().contains(InterruptPipe.interrupted)
                if interrupted { StandardOutput.interrupted() }
                let fire = interrupted || StandardOutput.closed
                if fire { self.cancel = nil }
                condition.unlock()
                if fire { cancel() }
            }
        }
    }
}
