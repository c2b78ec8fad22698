import Foundation
import Glibc

/// Lines produced on other threads (background watches). While the prompt is up they are
/// queued and the line editor's thread prints them above it; otherwise they print at once.
public enum AsyncLines {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var queued: [String] = []
    nonisolated(unsafe) private static var promptUp = false
    nonisolated(unsafe) static var readEnd: Int32 = -1
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    static func setUp() {
        guard readEnd < 0, let (r, w) = nonBlockingPipe() else { return }
        readEnd = r
        writeEnd = w
    }

    @Sendable public static func post(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        if promptUp {
            queued.append(line)
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        } else {
            StandardOutput.writeAll(line + "\n")
        }
    }

    static func editing(_ up: Bool) {
        lock.lock()
        promptUp = up
        let left = up ? [] : queued
        if !up { queued = [] }
        lock.unlock()
        for line in left { StandardOutput.writeAll(line + "\n") }
    }

    static func take() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readEnd, &buffer, buffer.count) > 0 {}
        lock.lock()
        defer { lock.unlock() }
        let lines = queued
        queued = []
        return lines
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
