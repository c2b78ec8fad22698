import Foundation
import RTDBShell

/// Splits a file descriptor's bytes into lines, read in blocks: a line is kept only up to
/// `ScriptLineTooLong.limit` bytes; a longer one is read through and measured. A final line
/// without a newline counts; `\r\n` ends a line as `\n` does. Bytes that are not UTF-8 are
/// replaced, as Swift's `readLine` does.
final class InputLineReader {
    private let fd: Int32
    private let limit: Int
    private var block = [UInt8](repeating: 0, count: 1 << 16)
    private var start = 0
    private var end = 0
    private var atEnd = false

    init(fd: Int32, limit: Int = ScriptLineTooLong.limit) {
        self.fd = fd
        self.limit = limit
    }

    /// The next line, nil at the end of the input (or on a read error).
    func next() -> Result<String, ScriptLineTooLong>? {
        var line: [UInt8] = []
        var length = 0
        var sawAny = false
        while true {
            if start == end {
                guard fill() else {
                    guard sawAny else { return nil }
                    return finish(line, length)
                }
            }
            sawAny = true
            let newline = block[start..<end].firstIndex(of: UInt8(ascii: "\n"))
            let stop = newline ?? end
            let piece = stop - start
            // One byte past the limit is kept: a `\r` before the newline is not the line's.
            if length + piece <= limit + 1 { line.append(contentsOf: block[start..<stop]) } else if length <= limit + 1 { line = [] }
            length += piece
            start = newline.map { $0 + 1 } ?? end
            if newline != nil { return finish(line, length) }
        }
    }

    private func finish(_ line: [UInt8], _ length: Int) -> Result<String, ScriptLineTooLong> {
        let carriageReturn = length <= limit + 1 && line.last == UInt8(ascii: "\r")
        let bytes = carriageReturn ? length - 1 : length
        guard bytes <= limit else { return .failure(ScriptLineTooLong(bytes: bytes)) }
        return .success(String(decoding: carriageReturn ? line.dropLast() : line[...], as: UTF8.self))
    }

    /// Reads the next block; false at the end of the input.
    private func fill() -> Bool {
        guard !atEnd else { return false }
        while true {
            let count = block.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                start = 0
                end = count
                return true
            }
            if count < 0 && errno == EINTR { continue }
            atEnd = true
            return false
        }
    }
}
