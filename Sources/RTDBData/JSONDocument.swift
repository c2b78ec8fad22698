import Synchronization

/// A validated JSON text whose big objects and arrays stay text until they are touched.
///
/// A large write (a REST body, a realtime message, an imported file) is mostly stored and
/// sent on, rarely looked into: making a `Node` per value cost 100 bytes and more per child,
/// where the text costs a few. So the text is validated once (`JSONDocumentScanner`), and
/// each container of more than `ChildMap.packedLimit` children becomes a `JSONContainer`: the
/// offsets of its children in key order. Its children are read from the text when asked
/// for, smaller containers whole; a change to it reads it into a tree first (`ChildMap`).
final class JSONDocument: Sendable {
    /// The text, shared with whoever handed it over (an array is not copied to be kept).
    let text: [UInt8]
    /// The big containers, by the offset of their opening bracket.
    let containers: [Int: JSONContainer]

    init(text: [UInt8], containers: [Int: JSONContainer]) {
        self.text = text
        self.containers = containers
    }

    /// The value that starts at `offset`: a leaf, a small container read whole, or a big
    /// one left as text.
    func value(at offset: Int) -> Node {
        text.withUnsafeBufferPointer { bytes in
            var reader = reader(bytes)
            reader.index = offset
            return decoded { try reader.readValue() }
        }
    }

    /// A reader of this text that leaves its big containers as they are.
    func reader(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONReader.Cursor {
        var reader = JSONReader.Cursor(bytes: bytes, options: .init(allowServerValues: false))
        reader.document = self
        return reader
    }

    /// The text was validated as it came in, so reading it again cannot fail; if it did, the
    /// reader would be wrong, not the data.
    func decoded(_ read: () throws -> Node) -> Node {
        do { return try read() } catch {
            assertionFailure("a validated document failed to read: \(error)")
            return .empty
        }
    }

    /// The child of `container` at `position` in key order, key and value.
    func entry(_ container: JSONContainer, at position: Int, with reader: inout JSONReader.Cursor) -> ChildEntry {
        reader.index = Int(container.offsets(in: self)[position])
        if container.isArray { return ChildEntry(key: .position(position), value: decoded { try reader.readValue() }) }
        let key = key(at: reader.index, with: reader.bytes)
        reader.index += key.name.utf8.count + 2
        return ChildEntry(key: key, value: decoded {
            try reader.expect(UInt8(ascii: ":"), "':'")
            return try reader.readValue()
        })
    }

    /// Where each element of the array `container` starts, found by reading them in order.
    func elementOffsets(of container: JSONContainer) -> [UInt32] {
        var offsets: [UInt32] = []
        offsets.reserveCapacity(container.count)
        text.withUnsafeBufferPointer { bytes in
            var reader = reader(bytes)
            reader.index = container.start + 1
            for _ in 0..<container.count {
                reader.skipWhitespace()
                offsets.append(UInt32(reader.index))
                reader.skipValue()
            }
        }
        return offsets
    }

    /// The key whose opening quote is at `offset` (keys with escapes are never left as text).
    func key(at offset: Int, with bytes: UnsafeBufferPointer<UInt8>) -> ChildKey {
        let raw = JSONDocument.rawKey(at: offset, in: bytes)
        return ChildKey(String(decoding: raw, as: UTF8.self), utf8: raw)
    }

    /// The bytes of the key whose opening quote is at `offset`.
    static func rawKey(at offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var end = offset + 1
        while end < bytes.count && bytes[end] != UInt8(ascii: "\"") { end += 1 }
        return UnsafeBufferPointer(rebasing: bytes[(offset + 1)..<end])
    }
}

/// Reads a container's children in order (an array's without its table of offsets).
struct EntryWalk {
    let container: JSONContainer
    private(set) var position = 0
    /// In an array, where the next element is (or the spaces before it).
    private(set) var offset: Int

    init(_ container: JSONContainer) {
        self.container = container
        offset = container.start + 1
    }

    mutating func next(_ document: JSONDocument, _ reader: inout JSONReader.Cursor) -> ChildEntry? {
        let at = position
        guard at < container.count else { return nil }
        position += 1
        guard container.isArray else { return document.entry(container, at: at, with: &reader) }
        reader.index = offset
        let value = document.decoded { try reader.readValue() }
        reader.skipSeparator()
        offset = reader.index
        return ChildEntry(key: .position(at), value: value)
    }
}

/// One big object or array of a `JSONDocument`: where its children are, and what its text
/// is worth as it stands.
final class JSONContainer: Sendable {
    /// The offsets of its opening and past its closing bracket.
    let start: Int, end: Int
    let isArray: Bool
    let count: Int
    /// An object's children's offsets (each key's opening quote), in key order.
    private let keyOffsets: [UInt32]
    /// An array's elements' offsets, found the first time one is asked for by position: a
    /// list is mostly written and read whole, in order, which needs none (they would cost
    /// half as much again as a list of small numbers' text).
    private let elementOffsets = Mutex<[UInt32]?>(nil)
    /// The text is what `JSONWriter` writes for it: no space, keys in order and unique,
    /// numbers and strings as it writes them, the same through every container below.
    let canonical: Bool
    /// An array somewhere in it (itself included): the export form writes those as objects.
    let hasArrays: Bool
    /// An object somewhere in it (itself included) that the plain form writes as an array.
    let hasArrayLikeObjects: Bool
    /// The longest path below it, relative to it: in keys, and in bytes with separators.
    let depth: Int, pathBytes: Int

    /// Whether its text is what `JSONWriter` writes for it in the plain or the export form
    /// (which writes arrays as objects; the plain one, objects of array positions as arrays).
    func isWrittenAsItIs(export: Bool) -> Bool {
        canonical && !(export ? hasArrays : hasArrayLikeObjects)
    }

    /// `keyOffsets`: an object's, in key order; none for an array.
    init(start: Int, end: Int, isArray: Bool, count: Int, keyOffsets: [UInt32], canonical: Bool, hasArrays: Bool,
         hasArrayLikeObjects: Bool, depth: Int, pathBytes: Int) {
        self.start = start
        self.end = end
        self.isArray = isArray
        self.count = count
        self.keyOffsets = keyOffsets
        self.canonical = canonical
        self.hasArrays = hasArrays
        self.hasArrayLikeObjects = hasArrayLikeObjects
        self.depth = depth
        self.pathBytes = pathBytes
    }

    /// Each child's offset, in key order: an object's child's key (its opening quote), an
    /// array's element's value.
    func offsets(in document: JSONDocument) -> [UInt32] {
        guard isArray else { return keyOffsets }
        return elementOffsets.withLock { table in
            if let table { return table }
            let built = document.elementOffsets(of: self)
            table = built
            return built
        }
    }
}

extension JSONReader.Cursor {
    /// Moves past the spaces and the comma after an element.
    mutating func skipSeparator() {
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: ",") { index += 1 }
    }

    /// Moves past the value here and the comma after it, in validated text: by its brackets
    /// and quotes alone, nothing read into a value.
    mutating func skipValue() {
        skipWhitespace()
        var depth = 0
        while index < bytes.count {
            let b = bytes[index]
            switch b {
            case UInt8(ascii: "\""):
                index += 1
                while index < bytes.count && bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return }  // the end of the container, after its last value
                depth -= 1
                index += 1
            case UInt8(ascii: ","):
                if depth == 0 {
                    index += 1
                    return
                }
                index += 1
            default:
                index += 1
            }
        }
    }
}
