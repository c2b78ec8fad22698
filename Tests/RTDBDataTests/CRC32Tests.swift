import XCTest
@testable import RTDBData
import RTDBTestSupport

final class CRC32Tests: XCTestCase {
    /// The standard check value, and every length around the sixteen-byte steps against the
    /// definition a bit at a time (so the sliced tables and the tail loop are both covered),
    /// whole and continued in two pieces (as a record written in pieces is checked).
    func testMatchesTheDefinition() {
        XCTAssertEqual(CRC32.checksum(Array("123456789".utf8)), 0xCBF43926)
        XCTAssertEqual(CRC32.checksum([]), 0)
        func bitwise(_ bytes: [UInt8]) -> UInt32 {
            var crc: UInt32 = 0xFFFFFFFF
            for b in bytes {
                crc ^= UInt32(b)
                for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB88320 ^ (crc >> 1) : crc >> 1 }
            }
            return ~crc
        }
        var generator = SeededRandom.forTest()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            XCTAssertEqual(CRC32.checksum(bytes), bitwise(bytes), "length \(length)")
            let cut = length / 3
            bytes.withUnsafeBytes { all in
                let first = CRC32.checksum(UnsafeRawBufferPointer(rebasing: all[..<cut]))
                XCTAssertEqual(CRC32.checksum(UnsafeRawBufferPointer(rebasing: all[cut...]), continuing: first), bitwise(bytes))
            }
            // From an odd address too: the words are read unaligned.
            let shifted = [0x55] + bytes
            shifted.withUnsafeBytes { all in
                XCTAssertEqual(CRC32.checksum(UnsafeRawBufferPointer(rebasing: all[1...])), bitwise(bytes))
            }
        }
    }
}
