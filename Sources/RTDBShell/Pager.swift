import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Shows output taller than the terminal through `$PAGER` (`less -FRX` when unset), as psql
/// and git do.
public enum Pager {
    /// Pages `text` when it is taller than the terminal; false when it was not paged (short
    /// enough, no terminal, or the pager could not start), so the caller prints it.
    public static func page(_ text: String) -> Bool {
        guard let rows = Terminal.size()?.rows, rows > 0, text.utf8.lazy.filter({ $0 == 0x0A }).count >= rows - 1 else { return false }
        let command = ProcessEnvironment.nonEmpty("PAGER") ?? "less -FRX"
        return ForegroundCommand.run(command, input: text) != nil
    }
}

/// A command's output on its way to the pager: standard output kept until the command ends,
/// messages passed on at once.
final class PagedOutput: Output, Sendable {
    private let text = Mutex("")
    private let messages: Output

    init(messages: Output) { self.messages = messages }

    var collected: String { text.withLock { $0 } }
    func write(_ text: String) { self.text.withLock { $0 += text } }
    func writeError(_ text: String) { messages.writeError(text) }
}
