import Foundation
import Glibc
import Synchronization

/// Lines produced on other threads (background watches). While the prompt is up they are
/// queued and the line editor's thread prints them above it; otherwise they print at once.
public enum AsyncLines {
    private struct State {
        var queued: [String] = []
        var promptUp = false
    }
    private static let state = Mutex(State())
    /// Wakes the line editor's reader when a line is queued; made by `setUp`.
    private static let ends: (read: Int32, write: Int32)? = nonBlockingPipe()
    static var readEnd: Int32 { ends?.read ?? -1 }

    static func setUp() { _ = ends }

    @Sendable public static func post(_ line: String) {
        // Printed under the lock: the prompt cannot come up in the middle of the line.
        state.withLock { state in
            guard state.promptUp, let writeEnd = ends?.write else { return StandardOutput.writeAll(line + "\n") }
            state.queued.append(line)
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }
    }

    static func editing(_ up: Bool) {
        let left: [String] = state.withLock { state in
            state.promptUp = up
            guard !up else { return [] }
            defer { state.queued = [] }
            return state.queued
        }
        for line in left { StandardOutput.writeAll(line + "\n") }
    }

    static func take() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readEnd, &buffer, buffer.count) > 0 {}
        return state.withLock { state in
            defer { state.queued = [] }
            return state.queued
        }
    }
}

/// A pipe whose ends never block: the self-pipes that wake the line editor's reader.
func nonBlockingPipe() -> (read: Int32, write: Int32)? {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return nil }
    _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
    _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
    return (fds[0], fds[1])
}
