import Foundation
import Glibc

/// Waiting for Ctrl-C (or SIGTERM) outside the line editor, e.g. a foreground watch.
public enum Interrupt {
    /// Blocks until an interrupt arrives (true) or `timeout` passes (false).
    public static func wait(timeout: TimeInterval?) -> Bool {
        InterruptPipe.install()
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        while true {
            var fd = pollfd(fd: InterruptPipe.readEnd, events: Int16(POLLIN), revents: 0)
            let remaining = deadline.map { max(0, Int32($0.timeIntervalSinceNow * 1000)) } ?? 250
            let ready = poll(&fd, 1, min(remaining, 250))
            if ready > 0 {
                if InterruptPipe.drain().contains(InterruptPipe.interrupted) { return true }
            }
            if StandardOutput.closed { return true }  // the reader of our output went away
            if let deadline, Date() >= deadline { return false }
        }
    }

    /// Wakes a waiter as Ctrl-C would.
    public static func raise() {
        InterruptPipe.install()
        var byte = InterruptPipe.interrupted
        _ = write(InterruptPipe.writeEnd, &byte, 1)
    }
}
