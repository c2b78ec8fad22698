import Foundation

/// Says something on standard error, as rtdb: the shell's own notices outside a session
/// (the cache, the credential), never its commands' output.
func warn(_ message: String) {
    FileHandle.standardError.write(Data("rtdb: \(message)\n".utf8))
}
