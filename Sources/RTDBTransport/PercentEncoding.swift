/// Text in a URL's path or query: every byte but RFC 3986's unreserved ASCII ones (letters,
/// digits, `-._~`) as %XX, so keys, JSON values and credentials of any kind go through
/// unchanged. (Foundation's character sets let non-ASCII letters through unencoded.)
public enum PercentEncoding {
    private static let hex = Array("0123456789ABCDEF".utf8)

    public static func encode(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
