import Foundation
import RTDBClient

/// Rejections of writes a script did not wait for: they arrive on the client core's queue
/// and are reported by the shell after the line being run.
///
/// `@unchecked Sendable`: its list is guarded by `lock`, which the compiler cannot see.
final class RejectedWrites: @unchecked Sendable {
    struct Rejection {
        let line: Int
        let source: String
        let error: DatabaseError
    }

    private let lock = NSLock()
    private var rejections: [Rejection] = []

    func add(line: Int, source: String, error: DatabaseError) {
        lock.withLock { rejections.append(Rejection(line: line, source: source, error: error)) }
    }

    func take() -> [Rejection] {
        lock.withLock {
            defer { rejections = [] }
            return rejections
        }
    }
}
