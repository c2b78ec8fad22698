import Foundation

/// A small deterministic random source (SplitMix64), for the fuzzer and the randomised
/// tests: a run is repeated exactly by its seed.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SeededRandom {
    /// The generator of a randomised test: seeded from `RTDB_TEST_SEED` when it is set (to
    /// repeat a run), else from the system's generator; the seed is printed either way, so
    /// a failure can be replayed exactly.
    public static func forTest(_ name: String = #function, file: String = #fileID) -> SeededRandom {
        let seed = ProcessInfo.processInfo.environment["RTDB_TEST_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("\(file) \(name): seed \(seed) (RTDB_TEST_SEED=\(seed) repeats it)")
        return SeededRandom(seed: seed)
    }
}
