import Foundation
import RTDBClient
import Synchronization

/// Rejections of writes a script did not wait for: they arrive on the client core's queue
/// and are reported by the shell after the line being run.
final class RejectedWrites: Sendable {
    struct Rejection {
        let line: Int
        let source: String
        let error: DatabaseError
    }

    private let rejections = Mutex<[Rejection]>([])

    func add(line: Int, source: String, error: DatabaseError) {
        rejections.withLock { $0.append(Rejection(line: line, source: source, error: error)) }
    }

    func take() -> [Rejection] {
        rejections.withLock { rejections in
            defer { rejections = [] }
            return rejections
        }
    }
}
