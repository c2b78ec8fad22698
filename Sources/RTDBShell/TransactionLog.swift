import Foundation
import RTDBClient
import RTDBData

/// What a transaction's attempts saw and computed, for `tx --verbose`, and the error that
/// stopped it, if its expression failed. Written on the client core's queue, read after.
///
/// `@unchecked Sendable`: guarded by `lock`, which the compiler cannot see.
final class TransactionLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    private var stop: ShellError?

    var attempts: [String] { lock.withLock { lines } }
    var error: ShellError? { lock.withLock { stop } }

    func attempt(_ current: Node, _ update: TransactionUpdate) {
        let result: String
        switch update {
        case .commit(let value): result = JSONWriter.string(value)
        case .abort(let reason): result = "abort" + (reason.map { " (\($0))" } ?? "")
        }
        lock.withLock { lines.append("\(JSONWriter.string(current)) -> \(result)") }
    }

    func failed(_ current: Node, _ error: ShellError) {
        lock.withLock {
            lines.append("\(JSONWriter.string(current)) -> error: \(error.message)")
            stop = error
        }
    }
}
