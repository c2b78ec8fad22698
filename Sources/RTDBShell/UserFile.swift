import Foundation

/// A file a command names (`@FILE`, `auth TOKEN-FILE`, `rules set FILE`): read whole, or
/// refused with a reason a person can act on.
enum UserFile {
    static func contents(_ name: String) throws -> Data {
        let path = (name as NSString).expandingTildeInPath
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw ShellError("cannot read \(name): no such file") }
        guard !isDirectory.boolValue else { throw ShellError("cannot read \(name): it is a folder") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ShellError("cannot read \(name): permission denied or unreadable")
        }
        return data
    }

    static func text(_ data: Data, of name: String) throws -> String {
        guard let text = String(data: data, encoding: .utf8) else { throw ShellError("cannot read \(name): the file is not UTF-8 text") }
        return text
    }
}
