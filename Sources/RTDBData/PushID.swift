// Follows the Firebase JS SDK's nextPushId (core/util/NextPushId.ts).

/// Chronological push ids: 8 characters of milliseconds, then 12 random characters that are
/// incremented (not redrawn) within the same millisecond, so ids from one generator strictly
/// increase and sort by creation time as strings.
public struct PushIDGenerator: Sendable {
    public static let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")

    private var lastTime: Int64 = -1
    private var lastRandom = [Int](repeating: 0, count: 12)

    public init() {}

    /// `now`: estimated server time in milliseconds (local clock + server time offset).
    public mutating func next(now: Int64) -> String {
        var random = SystemRandomNumberGenerator()
        return next(now: now, using: &random)
    }

    public mutating func next<R: RandomNumberGenerator>(now: Int64, using rng: inout R) -> String {
        let sameMillisecond = now == lastTime
        lastTime = now
        var chars = [Character](repeating: "-", count: 20)
        var t = max(0, now)  // a clock before 1970 (a broken server's offset) counts as 1970
        for i in stride(from: 7, through: 0, by: -1) {
            chars[i] = Self.alphabet[Int(t % 64)]
            t /= 64
        }
        if sameMillisecond {
            var i = 11
            while i >= 0 && lastRandom[i] == 63 {
                lastRandom[i] = 0
                i -= 1
            }
            if i >= 0 { lastRandom[i] += 1 }
        } else {
            for i in 0..<12 { lastRandom[i] = Int.random(in: 0..<64, using: &rng) }
        }
        for i in 0..<12 { chars[8 + i] = Self.alphabet[lastRandom[i]] }
        return String(chars)
    }
}
