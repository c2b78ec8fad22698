/// Fixed-width integers as the engine's files hold them (the log, the node file, HEAD):
/// little-endian, whatever the machine.
public enum LittleEndian {
    @inlinable
    public static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    /// Overwrites the bytes at `offset` (a length filled in once what it counts is written).
    @inlinable
    public static func write<T: FixedWidthInteger>(_ value: T, at offset: Int, in out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.replaceSubrange(offset..<(offset + $0.count), with: $0) }
    }

    /// The integer at `offset`, which the caller has checked lies whole within `bytes`.
    @inlinable
    public static func read<T: FixedWidthInteger>(_: T.Type, from bytes: UnsafeRawBufferPointer, at offset: Int) -> T {
        T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
