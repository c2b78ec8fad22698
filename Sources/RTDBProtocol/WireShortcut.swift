import RTDBData

/// The messages that make up nearly all of a stream of writes, read without building a JSON
/// tree of the envelope: a put or a merge (`{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":…}}}`,
/// with a hash `"h"` after the data and an origin `"o"` after the body where they are sent) and
/// an acknowledgement (`{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}`), byte for byte as this
/// program and the official SDKs write them.
///
/// A message is taken only when every byte outside the data is exactly in that form and the
/// data and path are read without an error; anything else (other members, spaces, another
/// order, any mistake) returns nil and goes to `WireCodec`'s reading of the whole envelope,
/// which then decides and words the error. What is taken is what that reading makes of it.
/// The envelope's generic parse was 12% of the CPU of pipelined writes over a WebSocket.
struct WireShortcut {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The message, or nil for the whole reading. `read(range, path, isMerge)` reads the data.
    mutating func decode(request read: (Range<Int>, Path, _ isMerge: Bool, _ id: Int) throws -> Request) -> Message? {
        guard literal(#"{"t":"d","d":{"r":"#), let id = integer() else { return nil }
        if literal(#","b":{"s":"ok","d":""}}}"#) {
            return index == bytes.count ? .response(id: id, .ok) : nil
        }
        guard literal(#","a":""#), index + 2 < bytes.count else { return nil }
        let action = bytes[index]
        guard action == UInt8(ascii: "p") || action == UInt8(ascii: "m") else { return nil }
        index += 1
        guard literal(#"","b":{"p":"#), let text = plainString(), literal(#","d":"#) else { return nil }
        let path = Path(text)
        guard (try? path.validate(allowPriorityLast: true)) != nil else { return nil }
        let start = index
        guard let end = JSONValue.endOfValue(in: bytes, from: start) else { return nil }
        index = end
        var hash: String?
        if action == UInt8(ascii: "p"), literal(#","h":"#) {
            guard let text = plainString() else { return nil }
            hash = text
        }
        guard literal("}") else { return nil }
        var origin: WriteOrigin?
        if literal(#","o":{"c":"#) {
            guard let client = plainString(), !client.isEmpty, client.utf8.count <= WriteOrigin.maximumClientLength,
                  id <= WriteOrigin.maximumRequest, literal(#","f":"#), let floor = integer(), floor <= id, literal("}") else {
                return nil
            }
            origin = WriteOrigin(client: client, floor: floor)
        }
        guard literal("}}"), index == bytes.count else { return nil }
        guard var request = try? read(start..<end, path, action == UInt8(ascii: "m"), id) else { return nil }
        if case .put(let path, let data, _) = request { request = .put(path: path, data: data, hash: hash) }
        return .request(id: id, request, origin: origin)
    }

    /// Moves past `text` when the bytes here are exactly it.
    private mutating func literal(_ text: StaticString) -> Bool {
        let n = text.utf8CodeUnitCount
        guard index + n <= bytes.count else { return false }
        for i in 0..<n where bytes[index + i] != text.utf8Start[i] { return false }
        index += n
        return true
    }

    /// A non-negative integer without a sign, fraction or leading zero, below 2^53.
    private mutating func integer() -> Int? {
        let start = index
        var value = 0
        while index < bytes.count, bytes[index] &- 0x30 < 10, index - start < 16 {
            value = value * 10 + Int(bytes[index] - 0x30)
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits < 16, digits == 1 || bytes[start] != 0x30 else { return nil }
        return value
    }

    /// A string with no escape or control character, of valid UTF-8, quotes included.
    private mutating func plainString() -> String? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
            guard bytes[end] >= 0x20, bytes[end] != UInt8(ascii: "\\") else { return nil }
            end += 1
        }
        guard end < bytes.count else { return nil }
        index = end + 1
        return String(validating: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }
}
