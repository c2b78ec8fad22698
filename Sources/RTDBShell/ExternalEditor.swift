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
        // WIFEXITED and WEXITSTATUS, WTERMSIG, spelled out for Swift.
        let signal = status & 0x7f, code = (status >> 8) & 0xff
        guard signal == 0 else {
            throw ShellError("the editor '\(editor)' was killed by signal \(signal): nothing written")
        }
        guard code == 0 else {
            throw ShellError("the editor '\(editor)' exited with status \(code): nothing written")
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ShellError("the edited file is gone: nothing written")
        }
        // Refused as `set @file` refuses it: a byte that is not UTF-8 would be stored as U+FFFD.
        if let offset = firstInvalidUTF8(data) {
            let (line, column) = ValueParser.lineAndColumn(String(decoding: data, as: UTF8.self), byte: offset)
            let byte = String(data[data.startIndex + offset], radix: 16, uppercase: true)
            throw ShellError("not written: line \(line), column \(column) of the edited value: byte 0x\(byte) is not UTF-8 (save the file as UTF-8)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The offset of the first byte of `data` that does not start valid UTF-8; nil when all does.
    static func firstInvalidUTF8(_ data: Data) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var bytes = data.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}
