/// Writes kept children in `JSONWriter`'s spelling straight from their text, making no nodes.
///
/// A document's text is copied as it is when it already is what the writer writes; one that is
/// not (spaced, keys out of order, a number or an escape spelled otherwise) was written by
/// reading each child into a node first: 57 MB/s for the JSON benchmark document, where the
/// same value held as nodes was written at 150. This writes such a text by walking it: spaces
/// dropped, each object's keys in order (a big one's are already sorted in its container),
/// strings copied unless they hold an escape or DEL, numbers read and written as the writer
/// writes them, arrays as objects in the export form, big canonical containers below copied.
///
/// What it leaves to the walk over nodes: pretty or coloured output, a priority, and in the
/// plain form an object below that it writes as an array (`hasArrayLikeObjects`).
struct JSONRespeller {
    let document: JSONDocument
    let export: Bool

    /// Whether `children` can be written this way in the form asked for.
    static func applies(to children: EncodedChildren, export: Bool) -> Bool {
        export || !children.container.hasArrayLikeObjects
    }

    /// Writes `container`'s children, brackets included, to `writer`.
    func write(_ container: JSONContainer, to writer: inout JSONWriter.Writer) {
        document.text.withUnsafeBufferPointer { bytes in
            var reader = document.reader(bytes)
            writeContainer(at: container.start, known: container, &reader, &writer)
        }
    }

    /// The value at `offset` (or after the spaces there); leaves `reader` just past it.
    private func value(at offset: Int, _ reader: inout JSONReader.Cursor, _ writer: inout JSONWriter.Writer) {
        let bytes = reader.bytes
        reader.index = offset
        reader.skipWhitespace()
        let start = reader.index
        guard start < bytes.count else { return }
        switch bytes[start] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let known = document.containers[start]
            if let known, known.isWrittenAsItIs(export: export) {
                writer.copy(UnsafeBufferPointer(rebasing: bytes[known.start..<known.end]))
                reader.index = known.end
            } else {
                writeContainer(at: start, known: known, &reader, &writer)
            }
        case UInt8(ascii: "\""):
            var end = start + 1
            var plain = true
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                if bytes[end] == UInt8(ascii: "\\") {
                    plain = false
                    break
                }
                if bytes[end] == 0x7F { plain = false }
                end += 1
            }
            if plain {
                writer.out.append(UnsafeBufferPointer(rebasing: bytes[start..<(end + 1)]))
                reader.index = end + 1
            } else {
                let string = read { try reader.readString() } ?? ""
                writer.string(string, .string)
            }
        case UInt8(ascii: "t"):
            writer.out.append("true")
            reader.index += 4
        case UInt8(ascii: "f"):
            writer.out.append("false")
            reader.index += 5
        default:
            writer.number(read { try reader.readNumber() } ?? 0)
        }
    }

    /// The object or array opening at `open`; `known`: its container, when it is a big one.
    /// Leaves `reader` just past its closing bracket.
    private func writeContainer(at open: Int, known: JSONContainer?, _ reader: inout JSONReader.Cursor,
                           _ writer: inout JSONWriter.Writer) {
        let bytes = reader.bytes
        if bytes[open] == UInt8(ascii: "[") {
            // Elements in order; the export form writes them as an object of their positions.
            writer.out.append(export ? UInt8(ascii: "{") : UInt8(ascii: "["))
            var position = 0
            var next = open + 1
            while true {
                reader.index = next
                reader.skipWhitespace()
                if reader.index >= bytes.count || bytes[reader.index] == UInt8(ascii: "]") { break }
                if position > 0 { writer.out.append(UInt8(ascii: ",")) }
                if export {
                    writer.out.append(0x22)
                    JSONWriter.withIntegerText(Double(position)) { writer.out.append($0) }
                    writer.out.append("\":")
                }
                value(at: reader.index, &reader, &writer)
                reader.skipSeparator()
                next = reader.index
                position += 1
                if writer.out.count > writer.limit { return }
                writer.drain?(&writer.out)
            }
            writer.out.append(export ? UInt8(ascii: "}") : UInt8(ascii: "]"))
            reader.index += 1
            return
        }
        // An object: its keys in order, a big one's from its container, a small one's sorted
        // here (a key twice: the last one, as the reader keeps it).
        let keys: [UInt32], end: Int
        if let known {
            keys = known.offsets(in: document)
            end = known.end
        } else {
            (keys, end) = sortedKeys(of: open, &reader)
        }
        writer.out.append(UInt8(ascii: "{"))
        for (i, keyOffset) in keys.enumerated() {
            if i > 0 { writer.out.append(UInt8(ascii: ",")) }
            let key = JSONDocument.rawKey(at: Int(keyOffset), in: bytes)
            // A kept key has no escape and nothing the writer escapes: it is written as it is.
            writer.out.append(UnsafeBufferPointer(rebasing: bytes[Int(keyOffset)...(Int(keyOffset) + key.count + 1)]))
            writer.out.append(UInt8(ascii: ":"))
            reader.index = Int(keyOffset) + key.count + 2
            reader.skipWhitespace()
            value(at: reader.index + 1, &reader, &writer)  // past the colon
            if writer.out.count > writer.limit { return }
            writer.drain?(&writer.out)
        }
        writer.out.append(UInt8(ascii: "}"))
        reader.index = end
    }

    /// The key offsets of the small object opening at `open`, in key order, one per key, and
    /// where the object ends (past its closing brace).
    private func sortedKeys(of open: Int, _ reader: inout JSONReader.Cursor) -> (keys: [UInt32], end: Int) {
        let bytes = reader.bytes
        // Each key's offset, with its bytes and integer value read once for the comparisons.
        var keys: [(offset: UInt32, raw: UnsafeBufferPointer<UInt8>, int: Int32?)] = []
        keys.reserveCapacity(ChildMap.packedLimit)
        var sorted = true
        reader.index = open + 1
        while true {
            reader.skipWhitespace()
            guard reader.index < bytes.count, bytes[reader.index] == UInt8(ascii: "\"") else { break }
            let raw = JSONDocument.rawKey(at: reader.index, in: bytes)
            let key = (offset: UInt32(reader.index), raw: raw, int: ChildKey.parseInt32(raw))
            if let last = keys.last, ChildKey.compare(raw: last.raw, last.int, raw, key.int) >= 0 { sorted = false }
            keys.append(key)
            reader.index += raw.count + 2
            reader.skipWhitespace()
            reader.index += 1  // the colon
            reader.skipValue()  // and the comma after it
        }
        let end = reader.index + 1
        if sorted { return (keys.map(\.offset), end) }
        // In key order, and for a key twice, in text order, so that the last of them is kept.
        keys.sort {
            let c = ChildKey.compare(raw: $0.raw, $0.int, $1.raw, $1.int)
            return c != 0 ? c < 0 : $0.offset < $1.offset
        }
        var unique: [UInt32] = []
        unique.reserveCapacity(keys.count)
        for (i, key) in keys.enumerated() {
            if i > 0, ChildKey.compare(raw: keys[i - 1].raw, keys[i - 1].int, key.raw, key.int) == 0 {
                unique[unique.count - 1] = key.offset
            } else {
                unique.append(key.offset)
            }
        }
        return (unique, end)
    }

    /// The text was validated as it came in, so reading a part again cannot fail; if it did,
    /// the reader would be wrong, not the data.
    private func read<T>(_ body: () throws -> T) -> T? {
        do { return try body() } catch {
            assertionFailure("a validated document failed to read: \(error)")
            return nil
        }
    }
}
