import Foundation
import Glibc

/// SIGINT and SIGWINCH write a byte here; the character reader turns them into ^C and a
/// resize. (A signal handler may only do async-signal-safe things such as `write`.)
enum InterruptPipe {
    static let interrupted: UInt8 = 1
    static let resized: UInt8 = 2
    /// The pipe, made once, before the handler that writes to it is installed.
    private static let ends: (read: Int32, write: Int32)? = nonBlockingPipe()
    static var readEnd: Int32 { ends?.read ?? -1 }

    /// Installs the handlers, once.
    static func install() { _ = installed }

    private static let installed: Void = {
        guard ends != nil else { return }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signal in
            guard let writeEnd = InterruptPipe.ends?.write else { return }
            var byte: UInt8 = signal == SIGWINCH ? InterruptPipe.resized : InterruptPipe.interrupted
            _ = write(writeEnd, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        sigaction(SIGWINCH, &action, nil)
    }()

    /// Empties the pipe; returns the kinds of signal seen.
    static func drain() -> Set<UInt8> {
        var seen = Set<UInt8>()
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let n = read(readEnd, &buffer, buffer.count)
            if n <= 0 { break }
            seen.formUnion(buffer[0..<n])
        }
        return seen
    }
}
