import RTDBData
import RTDBProtocol

/// The one write of a `cp` or `mv`: an update at the lowest path above the source and the
/// destination, guarded by the hashes of both as they were read, so that a change to either
/// by someone else in between makes the server refuse all of it.
struct CopyPlan: Equatable {
    var base: Path
    var entries: [UpdateEntry]
    var guards: [UpdateGuard]

    /// Refuses what the request may not do to these values (`value` read at the source,
    /// `existing` at the destination) and makes the write.
    init(_ request: CopyRequest, value: Node, existing: Node) throws {
        let (source, destination) = (request.source, request.destination)
        guard !value.isEmpty else { throw ShellError("there is nothing at \(source) to \(request.verb)") }
        if request.merge {
            guard !value.isLeaf else {
                throw ShellError("\(source) is a value, not a list: --merge writes its children into \(destination) (without --merge, \(destination) becomes it)")
            }
            if !request.force && !existing.isEmpty {
                guard !existing.isLeaf else {
                    throw ShellError("\(destination) \(CopyPlan.describe(existing)), a value: --force replaces it with \(source)'s children")
                }
                let clashes = value.children.compactMap { existing.child($0.key.name).isEmpty ? nil : $0.key.name }
                if !clashes.isEmpty {
                    let named = clashes.prefix(5).joined(separator: ", ") + (clashes.count > 5 ? ", … (\(clashes.count) in all)" : "")
                    throw ShellError("\(destination) already has \(clashes.count == 1 ? "a child" : "children") of the same name\(clashes.count == 1 ? "" : "s") as \(source)'s (\(named)): --force replaces \(clashes.count == 1 ? "it" : "them")")
                }
            }
        } else if !existing.isEmpty && !request.force {
            throw ShellError("\(destination) \(CopyPlan.describe(existing)): --force replaces it, --merge writes into it")
        }
        let shared = zip(source.keys, destination.keys).prefix { $0 == $1 }.count
        var base = Path(keys: Array(destination.keys.prefix(shared)))
        // An update writes below its location: one that replaces the destination is made at
        // its parent (the parser refuses a destination of / without --merge).
        if !request.merge && base == destination, let parent = base.parent { base = parent }
        let to = destination.relative(to: base) ?? .root
        let from = source.relative(to: base) ?? .root
        if request.merge {
            entries = value.children.map { UpdateEntry(to.child($0.key.name), $0.value) }
        } else {
            entries = [UpdateEntry(to, value)]
        }
        if request.move { entries.append(UpdateEntry(from, .empty)) }
        self.base = base
        guards = [UpdateGuard(from, hash: value.hashString), UpdateGuard(to, hash: existing.hashString)]
    }

    /// "already has 3 children", or "already holds" the value's JSON, cut short.
    static func describe(_ node: Node) -> String {
        guard node.isLeaf else { return "already has " + (node.childCount == 1 ? "1 child" : "\(node.childCount) children") }
        let text = JSONWriter.string(node.withPriority(nil))
        return "already holds " + (text.count > 40 ? String(text.prefix(39)) + "…" : text)
    }

    /// The value the write leaves at `base`, given what is there now (a transaction's step).
    func applied(to current: Node) -> Node {
        current.merging(entries.map { ($0.path, $0.value) })
    }
}
