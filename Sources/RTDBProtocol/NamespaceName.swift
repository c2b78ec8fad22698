/// What a namespace (a server's database) may be named, as Firebase allows: letters, digits,
/// dashes and underscores, at most 64. The server checks the names it is asked for, and the
/// shell the ones it is given, with this one rule.
public enum NamespaceName {
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
        }
    }
}
