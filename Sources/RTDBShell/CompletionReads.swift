import Dispatch
import RTDBClient
import Synchronization

/// What Tab reads from the database, so that Tab never holds the line: a read answered
/// within `patience` is used at once; one that is not goes on (for 10 s at most), and what it
/// finds is kept for the next Tab at the same place. A slow server's keys thus come on the
/// second Tab, as they do in a shell whose completion reads a slow disk.
final class CompletionReads<Value: Sendable>: Sendable {
    /// What the last read of each place found, whenever it came.
    private let found = Mutex<[String: Value]>([:])
    private let patience: Double
    /// The places kept at most (Tab is pressed at a few at a time).
    private static var kept: Int { 200 }

    init(patience: Double = 0.25) { self.patience = patience }

    /// `read`'s answer for `place` if it comes within the patience, else what an earlier
    /// read of `place` found (nil if none did). Called on the line editor's thread, which
    /// waits; the core's queue never does, so this cannot deadlock it.
    func value(at place: String, _ read: @escaping @Sendable () async throws -> Value) -> Value? {
        let answer = OneShot<Value>()
        let done = DispatchSemaphore(value: 0)
        Task { [self] in
            do {
                let value = try await withTimeout(10) { try await read() }
                self.found.withLock { found in
                    if found.count >= CompletionReads.kept { found.removeAll() }
                    found[place] = value
                }
                answer.resolve(.success(value))
            } catch {
                answer.resolve(.failure(error))
            }
            done.signal()
        }
        if done.wait(timeout: .now() + patience) == .success, case .success(let value)? = answer.current { return value }
        return found.withLock { $0[place] }
    }
}
