import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file read forwards in blocks, of which only the bytes from `keep` on stay in memory:
/// an import reads a file of any size in the memory of its largest write. Offsets are the
/// file's; line and column of any offset still held are known, for messages.
final class ByteWindow {
    private let fd: Int32
    private let name: String
    /// The bytes held, from file offset `base`.
    private(set) var buffer: [UInt8] = []
    private(set) var base = 0
    /// Bytes before this offset may be dropped.
    var keep = 0
    private(set) var atEnd = false
    /// Lines and the column (in characters) where the dropped bytes ended.
    private var droppedLines = 0
    private var droppedColumn = 0
    private static let blockSize = 1 << 20
    private var block = [UInt8](repeating: 0, count: ByteWindow.blockSize)

    init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
    }

    /// The byte at `offset`, reading more of the file when needed; nil past its end.
    @inline(__always) func byte(_ offset: Int) throws -> UInt8? {
        let i = offset - base
        if i < buffer.count { return buffer[i] }
        return try load(offset) ? buffer[offset - base] : nil
    }

    /// Reads until `offset` is held; false when the file ends first.
    func load(_ offset: Int) throws -> Bool {
        while offset - base >= buffer.count {
            if atEnd { return false }
            compact()
            let n: Int
            switch block.withUnsafeMutableBytes({ FileDescriptor.read(fd, into: $0) }) {
            case .success(let count): n = count
            case .failure(let error): throw ShellError("cannot read \(name): \(error.description)")
            }
            buffer.append(contentsOf: block[0..<n])
            if n == 0 { atEnd = true }
        }
        return true
    }

    /// Drops what is no longer kept once it is worth moving the rest.
    private func compact() {
        let drop = keep - base
        guard drop > ByteWindow.blockSize, drop * 2 > buffer.count else { return }
        for b in buffer[0..<drop] { count(b) }
        buffer.removeFirst(drop)
        base = keep
    }

    @inline(__always) private func count(_ b: UInt8) {
        if b == 0x0A { droppedLines += 1; droppedColumn = 0 } else if b & 0xC0 != 0x80 { droppedColumn += 1 }
    }

    /// The first offset from `offset` on that is not JSON whitespace. `release`: nothing
    /// before it is needed again, so a long run of spaces is not held.
    func skipWhitespace(_ offset: Int, release: Bool = false) throws -> Int {
        var i = offset
        while let b = try byte(i), b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 {
            i += 1
            if release { keep = i }
        }
        return i
    }

    /// Where the JSON value starting at `offset` ends, if it ends within `limit` bytes; nil
    /// when it is longer. Only strings and brackets are followed: the syntax is checked when
    /// the value is parsed.
    func endOfValue(_ offset: Int, limit: Int) throws -> Int? {
        var i = offset
        var depth = 0
        var inString = false
        let stop = offset + limit
        guard let first = try byte(i) else { return nil }
        if first != UInt8(ascii: "{") && first != UInt8(ascii: "[") && first != UInt8(ascii: "\"") {
            // A number or a literal: up to the next delimiter.
            while let b = try byte(i), !Self.isDelimiter(b) {
                i += 1
                if i > stop { return nil }
            }
            return i
        }
        while i < stop {
            // Unterminated (the parser says so), at the file's end at most: an escape's
            // backslash as the last byte must not point past it.
            guard try byte(i) != nil else { return min(i, base + buffer.count) }
            let end = min(stop, base + buffer.count)
            var j = i - base
            let last = end - base
            while j < last {
                let b = buffer[j]
                j += 1
                if inString {
                    if b == UInt8(ascii: "\\") { j += 1 } else if b == UInt8(ascii: "\"") {
                        inString = false
                        if depth == 0 { return base + j }
                    }
                    continue
                }
                switch b {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth <= 0 { return base + j }
                default: break
                }
            }
            i = base + j
        }
        return nil
    }

    private static func isDelimiter(_ b: UInt8) -> Bool {
        switch b {
        case 0x20, 0x0A, 0x0D, 0x09, UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ":"): return true
        default: return false
        }
    }

    /// Runs `body` on the bytes `range` (which must be held).
    func withBytes<T>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[(range.lowerBound - base)..<(range.upperBound - base)])) }
    }

    /// "name:line:column" of a held offset (columns in characters, from 1).
    func location(_ offset: Int) -> String {
        let upTo = max(0, min(offset - base, buffer.count))
        var lines = droppedLines
        var column = droppedColumn
        for b in buffer[0..<upTo] {
            if b == 0x0A { lines += 1; column = 0 } else if b & 0xC0 != 0x80 { column += 1 }
        }
        return "\(name):\(lines + 1):\(column + 1)"
    }
}
