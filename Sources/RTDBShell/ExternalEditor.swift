import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Text edited in the user's editor: `$VISUAL`, `$EDITOR`, or `vi`.
enum ExternalEditor {
    /// Writes `text` to a private temporary file named after `name`, runs the editor on it
    /// in the foreground (it owns the terminal until it exits) and returns what was saved.
    static func edit(_ text: String, name: String) throws -> String {
        let editor = ProcessEnvironment.nonEmpty("VISUAL") ?? ProcessEnvironment.nonEmpty("EDITOR") ?? "vi"
        let safeName = String(name.map { $0.isLetter || $0.isNumber ? $0 : "-" }.prefix(40))
        let file = NSTemporaryDirectory() + "rtdb-edit-\(safeName)-\(UUID().uuidString.prefix(8)).json"
        guard FileManager.default.createFile(atPath: file, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ShellError("cannot write the temporary file \(file)")
        }
        defer { try? FileManager.default.removeItem(atPath: file) }
        // sh runs EDITOR as the user wrote it (with its arguments); the file comes as "$1".
        guard let status = ForegroundCommand.run(editor + " \"$1\"", arguments: [file]) else {
            throw ShellError("cannot start the editor '\(editor)'")
        }
        // Exited normally with status 0 (WIFEXITED and WEXITSTATUS, spelled out for Swift).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw ShellError("the editor '\(editor)' failed (status \(status)): nothing written")
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ShellError("the edited file is gone: nothing written")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
