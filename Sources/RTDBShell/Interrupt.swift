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
        InterruptPipe.install()
        let task = Task { @MainActor in await operation() }
        let watcher = Watcher {
            interrupted()
            task.cancel()
        }
        defer { watcher.stop() }
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Watches the interrupt pipe on a thread of its own while one command runs.
    ///
    /// `@unchecked Sendable`: `stopped` is guarded by `lock`, held while the pipe is drained,
    /// so once `stop` returns the line editor is the pipe's only reader again.
    private final class Watcher: @unchecked Sendable {
        private let lock = NSLock()
        private var stopped = false

        init(cancel: @escaping @Sendable () -> Void) {
            let thread = Thread { [self] in
                while true {
                    var fd = pollfd(fd: InterruptPipe.readEnd, events: Int16(POLLIN), revents: 0)
                    let ready = poll(&fd, 1, 100)
                    lock.lock()
                    if stopped { return lock.unlock() }
                    let interrupted = ready > 0 && InterruptPipe.drain().contains(InterruptPipe.interrupted)
                    lock.unlock()
                    if interrupted || StandardOutput.closed {
                        cancel()
                        return
                    }
                }
            }
            thread.name = "rtdb.interrupt"
            thread.start()
        }

        func stop() {
            lock.withLock { stopped = true }
        }
    }
}
