/// The children of a big object or array still held as a document's text (see
/// `JSONDocument`): each read from the text where it is asked for, a key found in O(log n)
/// through the container's offsets, all of them in order in one pass.
struct EncodedChildren: Sendable {
    let document: JSONDocument
    let container: JSONContainer

    var count: Int { container.count }

    func entry(at position: Int) -> ChildEntry {
        document.text.withUnsafeBufferPointer { bytes in
            var reader = document.reader(bytes)
            return document.entry(container, at: position, with: &reader)
        }
    }

    func key(at position: Int) -> ChildKey {
        document.text.withUnsafeBufferPointer { key(at: position, in: $0) }
    }

    private func key(at position: Int, in bytes: UnsafeBufferPointer<UInt8>) -> ChildKey {
        container.isArray ? .position(position) : document.key(at: Int(container.offsets(in: document)[position]), with: bytes)
    }

    /// Where `key` is, or where it would go.
    func search(_ key: ChildKey) -> (index: Int, found: Bool) {
        if container.isArray { return ChildMap.search(key, count: count) { .position($0) } }
        let offsets = container.offsets(in: document)
        return document.text.withUnsafeBufferPointer { bytes in
            ChildMap.search(key, count: count) { document.key(at: Int(offsets[$0]), with: bytes) }
        }
    }

    subscript(key: ChildKey) -> Node? {
        let at = search(key)
        return at.found ? entry(at: at.index).value : nil
    }

    func forEachEntry(_ body: (ChildEntry) throws -> Void) rethrows {
        try withEntries { next in
            while let entry = next() { try body(entry) }
        }
    }

    /// Lends `body` a reader of the children in key order (nil after the last).
    func withEntries<R>(_ body: (_ next: () -> ChildEntry?) throws -> R) rethrows -> R {
        try document.text.withUnsafeBufferPointer { bytes in
            var reader = document.reader(bytes)
            var walk = EntryWalk(container)
            return try body { walk.next(document, &reader) }
        }
    }

    /// Every child read from the text, as a tree: what a change starts from. The tree asks
    /// for its elements in order, so they are read in one pass.
    func tree() -> WeightBalancedTree<ChildEntry> {
        withEntries { next in
            var asked = 0
            return WeightBalancedTree(count: count, sorted: { position in
                defer { asked += 1 }
                guard position == asked, let entry = next() else { return entry(at: position) }
                return entry
            })
        }
    }

    /// What a copy of the text must be: exactly what `JSONWriter` writes in its plain or
    /// export form, or (`asRead`) anything that reads back as the same value.
    enum TextForm { case plain, export, asRead }

    /// Lends `body` the text when it may be written as it is in `form`; nil when not.
    func withText<R>(_ form: TextForm, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard allows(form) else { return nil }
        return document.text.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[container.start..<container.end])) }
    }

    /// The document's whole text, shared, when it is these children alone and may be
    /// written as it is in `form` (an answer echoing a body: the body itself, not a copy).
    func wholeText(_ form: TextForm) -> [UInt8]? {
        guard allows(form), container.start == 0, container.end == document.text.count else { return nil }
        return document.text
    }

    private func allows(_ form: TextForm) -> Bool {
        form == .asRead || container.isWrittenAsItIs(export: form == .export)
    }

    func isSame(as other: EncodedChildren) -> Bool {
        container === other.container
    }
}
