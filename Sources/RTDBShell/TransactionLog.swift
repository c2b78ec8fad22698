import Foundation
import RTDBClient
import RTDBData
import Synchronization

/// What a transaction's attempts saw and computed, for `tx --verbose`, and the error that
/// stopped it, if its expression failed. Written on the client core's queue, read after.
final class TransactionLog: Sendable {
    private let state = Mutex<(lines: [String], stop: ShellError?)>(([], nil))

    var attempts: [String] { state.withLock { $0.lines } }
    var error: ShellError? { state.withLock { $0.stop } }

    func attempt(_ current: Node, _ update: TransactionUpdate) {
        let result: String
        switch update {
        case .commit(let value): result = JSONWriter.string(value)
        case .abort(let reason): result = "abort" + (reason.map { " (\($0))" } ?? "")
        }
        state.withLock { $0.lines.append("\(JSONWriter.string(current)) -> \(result)") }
    }

    func failed(_ current: Node, _ error: ShellError) {
        state.withLock { state in
            state.lines.append("\(JSONWriter.string(current)) -> error: \(error.message)")
            state.stop = error
        }
    }
}
