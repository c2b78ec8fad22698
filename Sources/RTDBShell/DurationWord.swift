/// A duration as a person types it: `500ms`, `2s`, `1.5m`, `1h`, or a bare number of seconds.
public enum DurationWord {
    /// The longest duration accepted anywhere (a day): a typo must not wait for years.
    public static let maxSeconds = 86_400.0

    /// Seconds, or nil when `text` is not a duration (negative, not finite, too long, no unit
    /// that is known).
    public static func seconds(_ text: String) -> Double? {
        let units: [(suffix: String, scale: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("", 1)]
        for unit in units where text.hasSuffix(unit.suffix) {
            let number = text.dropLast(unit.suffix.count)
            // Digits and one point only: no signs, exponents, "inf" or "nan".
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                  number.filter({ $0 == "." }).count <= 1, let value = Double(number) else { continue }
            let seconds = value * unit.scale
            return seconds.isFinite && seconds <= maxSeconds ? seconds : nil
        }
        return nil
    }

    /// A duration as messages say it: "500 ms", "1 second", "30 seconds", "1.5 seconds".
    public static func describe(_ seconds: Double) -> String {
        if seconds < 1 { return "\(Int((seconds * 1000).rounded())) ms" }
        if seconds == seconds.rounded() { return seconds == 1 ? "1 second" : "\(Int(seconds)) seconds" }
        return "\((seconds * 10).rounded() / 10) seconds"
    }

    /// A time still to go, as a progress line says it: "8 s", "2 min 5 s", "1 h 20 min"
    /// (rounded up; past 99 hours, "over 99 h").
    static func estimate(_ seconds: Double) -> String {
        guard seconds < 99 * 3600 else { return "over 99 h" }
        let s = Int(max(0, seconds).rounded(.up))
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min \(s % 60) s" }
        return "\(s / 3600) h \(s % 3600 / 60) min"
    }
}
