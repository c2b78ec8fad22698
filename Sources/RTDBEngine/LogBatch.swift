/// Records queued for the log, in order. Most are encoded into one buffer as they come; a
/// record holding a big document's text (`LogRecord.isLarge`) is kept as it is and written
/// in pieces, so its value is never in memory twice (as text, and as a record).
struct LogBatch {
    private var bytes: [UInt8] = []
    /// Records written in pieces, each before the byte of `bytes` at `at`.
    private var inPieces: [(at: Int, record: LogRecord)] = []

    var isEmpty: Bool { bytes.isEmpty && inPieces.isEmpty }

    mutating func append(_ record: LogRecord) {
        if record.isLarge { inPieces.append((bytes.count, record)) } else { record.encode(into: &bytes) }
    }

    /// Writes every record through `sink`, in order; returns how many bytes.
    func write(_ sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        var done = 0, written = bytes.count
        for (at, record) in inPieces {
            if at > done { try bytes.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[done..<at])) } }
            done = at
            written += try record.write(sink)
        }
        if done < bytes.count { try bytes.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[done...])) } }
        return written
    }

    /// Empties the batch, keeping the buffer's room unless it grew big.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: bytes.capacity < 1 << 20)
        inPieces.removeAll()
    }
}
