import Foundation
import RTDBShell

/// The lines of standard input, read ahead on a thread of their own (a read blocks) and
/// handed to the script runner as it asks for them; at most `capacity` lines, and about
/// `byteCapacity` bytes, wait in memory, so a long script is never read whole. A line longer
/// than any command takes is measured, not kept (`ScriptLineTooLong`).
///
/// A reader that waits for room is woken once half of the lines are taken, not at each one:
/// woken for every line, it read one, found the buffer full again and slept, a thread switch
/// per line of a long script.
///
/// `@unchecked Sendable`: its state is guarded by `condition`, which the compiler cannot see.
final class StandardInputLines: @unchecked Sendable {
    private let condition = NSCondition()
    /// Lines read and not yet taken are `buffer[head...]`, holding `bytesHeld` bytes.
    private var buffer: [Line] = []
    private var head = 0
    private var bytesHeld = 0
    private var finished = false
    /// The runner, waiting for a line; only while `buffer` holds none.
    private var waiting: CheckedContinuation<Line?, Never>?
    /// Whether the reader sleeps until there is room.
    private var readerWaits = false
    private let capacity: Int
    private let byteCapacity: Int
    /// The next line of the input, nil at its end (standard input's, but for tests).
    private let source: () -> Line?

    typealias Line = Result<String, ScriptLineTooLong>

    init(capacity: Int = 4096, byteCapacity: Int = 64 << 20, source: @escaping () -> Line? = InputLineReader(fd: STDIN_FILENO).next) {
        self.capacity = capacity
        self.byteCapacity = byteCapacity
        self.source = source
        let reader = Thread { [self] in readAll() }
        reader.name = "rtdb.stdin"
        reader.start()
    }

    /// How many lines the buffer holds, taken ones included (fewer than twice `capacity`).
    var linesHeld: Int { condition.withLock { buffer.count } }

    nonisolated(nonsending) func next() async throws(ScriptLineTooLong) -> String? {
        try await nextLine()?.get()
    }

    nonisolated(nonsending) private func nextLine() async -> Line? {
        // A line already read is taken without suspending (the common case in a long script).
        if let line = condition.withLock({ takeLocked() }) { return line }
        return await withCheckedContinuation { (next: CheckedContinuation<Line?, Never>) in
            condition.lock()
            if let line = takeLocked() {
                condition.unlock()
                next.resume(returning: line)
            } else if finished {
                condition.unlock()
                next.resume(returning: nil)
            } else {
                waiting = next
                condition.unlock()
            }
        }
    }

    /// The next buffered line, if any; the reader may go on. Called with `condition` locked.
    private func takeLocked() -> Line? {
        guard head < buffer.count else { return nil }
        let line = buffer[head]
        head += 1
        bytesHeld -= StandardInputLines.size(of: line)
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= capacity {
            // A reader that keeps ahead never lets the buffer empty: the lines taken go
            // (moving at most `capacity` lines, once every `capacity` taken).
            buffer.removeFirst(head)
            head = 0
        }
        if readerWaits && buffer.count - head <= capacity / 2 && bytesHeld <= byteCapacity / 2 {
            readerWaits = false
            condition.signal()
        }
        return line
    }

    private func readAll() {
        while let line = source() {
            condition.lock()
            while buffer.count - head >= capacity || (bytesHeld >= byteCapacity && buffer.count > head) {
                readerWaits = true
                condition.wait()
            }
            // After the wait: the runner may have taken every line meanwhile and be waiting
            // for the next, which is this one.
            if let next = waiting {
                waiting = nil
                condition.unlock()
                next.resume(returning: line)
                continue
            }
            buffer.append(line)
            bytesHeld += StandardInputLines.size(of: line)
            condition.unlock()
        }
        condition.lock()
        finished = true
        let next = waiting
        waiting = nil
        condition.unlock()
        next?.resume(returning: nil)
    }

    private static func size(of line: Line) -> Int {
        if case .success(let text) = line { return text.utf8.count }
        return 0
    }
}
