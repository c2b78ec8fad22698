import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The terminal standard output is on: its size, and questions asked on it.
public enum Terminal {
    /// Rows and columns; nil when standard output is not a terminal.
    public static func size() -> (rows: Int, columns: Int)? {
        var size = winsize()
        guard isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return (Int(size.ws_row), Int(size.ws_col))
    }

    /// Columns to lay output out in: the terminal's, 80 when there is none.
    public static var width: Int { size()?.columns ?? 80 }

    public static func confirm(_ question: String) -> Bool {
        FileHandle.standardError.write(Data(question.utf8))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }
}
