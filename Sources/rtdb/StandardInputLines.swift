import Foundation

/// The lines of standard input, read ahead on a thread of their own (a read blocks) and
/// handed to the script runner as it asks for them; at most `capacity` lines wait in
/// memory, so a long script is never read whole.
///
/// A reader that waits for room is woken once half of the lines are taken, not at each one:
/// woken for every line, it read one, found the buffer full again and slept, a thread switch
/// per line of a long script.
///
/// `@unchecked Sendable`: its state is guarded by `condition`, which the compiler cannot see.
final class StandardInputLines: @unchecked Sendable {
    private let condition = NSCondition()
    private var buffer: [String] = []
    private var head = 0
    private var finished = false
    private var waiting: CheckedContinuation<String?, Never>?
    /// Whether the reader sleeps until there is room.
    private var readerWaits = false
    private let capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = capacity
        let reader = Thread { [self] in readAll() }
        reader.name = "rtdb.stdin"
        reader.start()
    }

    nonisolated(nonsending) func next() async -> String? {
        // A line already read is taken without suspending (the common case in a long script).
        if let line = condition.withLock({ takeLocked() }) { return line }
        return await withCheckedContinuation { (next: CheckedContinuation<String?, Never>) in
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
    private func takeLocked() -> String? {
        guard head < buffer.count else { return nil }
        let line = buffer[head]
        head += 1
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            head = 0
        }
        if readerWaits && buffer.count - head <= capacity / 2 {
            readerWaits = false
            condition.signal()
        }
        return line
    }

    private func readAll() {
        while let line = readLine(strippingNewline: true) {
            condition.lock()
            if let next = waiting {
                waiting = nil
                condition.unlock()
                next.resume(returning: line)
                continue
            }
            while buffer.count - head >= capacity {
                readerWaits = true
                condition.wait()
            }
            buffer.append(line)
            condition.unlock()
        }
        condition.lock()
        finished = true
        let next = waiting
        waiting = nil
        condition.unlock()
        next?.resume(returning: nil)
    }
}
