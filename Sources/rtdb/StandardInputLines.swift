import Foundation
import RTDBShell
import Synchronization

/// The lines of standard input, read ahead on a thread of their own (a read blocks) and
/// handed to the script runner as it asks for them; at most `capacity` lines, and about
/// `byteCapacity` bytes, wait in memory, so a long script is never read whole. A line longer
/// than any command takes is measured, not kept (`ScriptLineTooLong`).
///
/// The reading is done by demand on a queue of its own: it reads while there is room and
/// stops when the buffer is full; taking lines starts it again once half of them are taken,
/// not at each one (a read per line taken was a thread switch per line of a long script).
final class StandardInputLines: Sendable {
    private struct State {
        /// Lines read and not yet taken are `buffer[head...]`, holding `bytesHeld` bytes.
        var buffer: [Line] = []
        var head = 0
        var bytesHeld = 0
        var finished = false
        /// The runner, waiting for a line; only while `buffer` holds none.
        var waiting: CheckedContinuation<Line?, Never>?
        /// Whether reading is under way (or queued to start).
        var reading = true
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let byteCapacity: Int
    /// The next line of the input, nil at its end (standard input's, but for tests). A
    /// read blocks, so it is made on `readQueue`, never on the runner's thread.
    private let source: Mutex<() -> Line?>
    private let readQueue = DispatchQueue(label: "rtdb.stdin")

    typealias Line = Result<String, ScriptLineTooLong>

    init(capacity: Int = 4096, byteCapacity: Int = 64 << 20,
         source: sending @escaping () -> Line? = InputLineReader(fd: STDIN_FILENO).next) {
        self.capacity = capacity
        self.byteCapacity = byteCapacity
        self.source = Mutex(source)
        readQueue.async { self.readWhileThereIsRoom() }
    }

    /// How many lines the buffer holds, taken ones included (fewer than twice `capacity`).
    var linesHeld: Int { state.withLock { $0.buffer.count } }

    nonisolated(nonsending) func next() async throws(ScriptLineTooLong) -> String? {
        try await nextLine()?.get()
    }

    nonisolated(nonsending) private func nextLine() async -> Line? {
        // A line already read is taken without suspending (the common case in a long script).
        if let line = take() { return line }
        return await withCheckedContinuation { (next: CheckedContinuation<Line?, Never>) in
            enum Now { case line(Line), end, later }
            let now: Now = state.withLock { state in
                if let line = take(&state) { return .line(line) }
                if state.finished { return .end }
                state.waiting = next
                return .later
            }
            switch now {
            case .line(let line): next.resume(returning: line)
            case .end: next.resume(returning: nil)
            case .later: break
            }
        }
    }

    private func take() -> Line? {
        state.withLock { take(&$0) }
    }

    /// Under the lock: the next buffered line, if any, starting the reading again once half
    /// of the room is free.
    private func take(_ state: inout State) -> Line? {
        guard state.head < state.buffer.count else { return nil }
        let line = state.buffer[state.head]
        state.head += 1
        state.bytesHeld -= StandardInputLines.size(of: line)
        if state.head == state.buffer.count {
            state.buffer.removeAll(keepingCapacity: true)
            state.head = 0
        } else if state.head >= capacity {
            // A reader that keeps ahead never lets the buffer empty: the lines taken go
            // (moving at most `capacity` lines, once every `capacity` taken).
            state.buffer.removeFirst(state.head)
            state.head = 0
        }
        if !state.reading && !state.finished && state.buffer.count - state.head <= capacity / 2 && state.bytesHeld <= byteCapacity / 2 {
            state.reading = true
            readQueue.async { self.readWhileThereIsRoom() }
        }
        return line
    }

    /// Reads lines into the buffer (or straight to a waiting runner) until it is full or the
    /// input ends.
    private func readWhileThereIsRoom() {
        while true {
            let room = state.withLock { state -> Bool in
                let full = state.buffer.count - state.head >= capacity || (state.bytesHeld >= byteCapacity && state.buffer.count > state.head)
                if full { state.reading = false }
                return !full
            }
            guard room else { return }
            let line = source.withLock { $0() }
            let waiting: CheckedContinuation<Line?, Never>? = state.withLock { state in
                guard let line else {
                    state.finished = true
                    state.reading = false
                    defer { state.waiting = nil }
                    return state.waiting
                }
                // The runner may have taken every line and be waiting for the next: this one.
                if let waiting = state.waiting {
                    state.waiting = nil
                    return waiting
                }
                state.buffer.append(line)
                state.bytesHeld += StandardInputLines.size(of: line)
                return nil
            }
            waiting?.resume(returning: line)
            if line == nil { return }
        }
    }

    private static func size(of line: Line) -> Int {
        if case .success(let text) = line { return text.utf8.count }
        return 0
    }
}
