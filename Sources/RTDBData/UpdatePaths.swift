/// Checks for a multi-path update: none of its paths may be an ancestor of another
/// (`a` and `a/b` in one update would make the outcome depend on order).
public func validateUpdatePaths(_ entries: [(Path, Node)], base: Path) throws {
    let sorted = entries.map(\.0).sorted()
    for (a, b) in zip(sorted, sorted.dropFirst()) where a.contains(b) {
        throw DataError.invalidValue(path: base.appending(b).description,
            reason: "update paths \"\(a.wireString)\" and \"\(b.wireString)\" overlap: one contains the other")
    }
}
