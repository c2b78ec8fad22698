/// The bytes `JSONWriter` writes a document into: a growable buffer of its own, because an
/// `[UInt8]` checks that it is uniquely referenced and has room at every byte appended, which
/// was a third of the writer's instructions. Noncopyable: it owns its memory.
struct JSONOutput: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Makes room for `n` more bytes.
    @inline(__always) private mutating func reserve(_ n: Int) {
        if capacity - count < n { grow(to: count + n) }
    }

    @inline(never) private mutating func grow(to needed: Int) {
        var size = capacity
        while size < needed { size *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        bigger.update(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity = size
    }

    @inline(__always) mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Lends `body` room for `n` more bytes; it writes at most that many and returns how many.
    /// Its writes go through a local pointer, the count stored once: appended one at a time,
    /// each byte stored the count back.
    @inline(__always) mutating func append(reserving n: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        reserve(n)
        count += body(base + count)
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        if bytes.count <= 16 {
            // Most keys and values are this short: a call to memcpy costs more than the loop.
            for i in 0..<bytes.count { base[count + i] = start[i] }
        } else {
            (base + count).update(from: start, count: bytes.count)
        }
        count += bytes.count
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Moves what was written to the end of `out`, leaving this empty.
    mutating func flush(into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
        count = 0
    }
}
