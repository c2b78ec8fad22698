import RTDBData
import RTDBProtocol
import RTDBRules

/// `explain`: a read answered as `get` answers it (the rules decide, an index built for it is
/// kept), described instead of sent: which index ordered the children, how many children
/// were read, the time it took, and the `.indexOn` the rules lack for it.
extension Database {
    /// A read the database refused, as it would answer the read itself.
    public struct Refused: Error, Sendable {
        public let response: Response
    }

    /// Reads `path` with `query` as `identity` would, and says how it was answered.
    public nonisolated func explain(_ path: Path, query: QueryParams?, as identity: Identity = .admin,
                                    completion: @escaping @Sendable (Result<QueryExplanation, Refused>) -> Void) {
        schedule { completion($0.explanation(path, query, as: identity)) }
    }

    private func explanation(_ path: Path, _ query: QueryParams?, as identity: Identity) -> Result<QueryExplanation, Refused> {
        // Writes received before it are in the answer, as they are in a read's.
        storeWrites()
        if let error = Database.checkPath(path, writing: false, priorityLast: true) { return .failure(Refused(response: error)) }
        if let refusal = refusedRead(path, query, as: identity) { return .failure(Refused(response: refusal)) }
        let started = OperationRecord.now()
        let node = root.child(at: path)
        let children = node.childCount
        guard let query, !query.loadsAllData else {
            return .success(Self.explanation(path, query, rules: rules, use: .whole, children: children, returned: children,
                                             micros: OperationRecord.micros(since: started), listens: 0))
        }
        let key = QueryIndexes.key(path, query.index)
        let before = indexes[key]
        let returned = answer(query, at: path, on: node).childCount
        let micros = OperationRecord.micros(since: started)
        // Decided once answered: a stored index found damaged while answering was built again.
        let use: QueryExplanation.Use
        if query.index == .key {
            use = .keyOrder
        } else if let before, !before.isStale, !before.isStored || indexes[key]?.isStored == true {
            use = before.isStored ? .stored : .kept
        } else {
            use = .built
        }
        return .success(Self.explanation(path, query, rules: rules, use: use, children: children, returned: returned, micros: micros,
                                         listens: indexListens[key] ?? 0))
    }

    /// The explanation of a read at `path` answered as `use` says, and what `rules` say of
    /// its index: declared, warned of, or the `.indexOn` to write (key and priority order
    /// need none). Public for a server's namespace that holds nothing yet, explained
    /// without opening it.
    public static func explanation(_ path: Path, _ query: QueryParams?, rules: SecurityRules, use: QueryExplanation.Use, children: Int,
                                   returned: Int, micros: Int, listens: Int) -> QueryExplanation {
        let declared = query.map { rules.declares($0.index, at: path) } ?? false
        // Only a query with a limit or a range uses an index: without, clients read the whole
        // location and order it themselves.
        let windowed = query.map { !$0.loadsAllData } ?? false
        var indexOn: [String]?
        switch query?.index {
        case .child?, .value?:
            if windowed && !declared, let query { indexOn = rules.indexOn(at: path) + [query.index.description] }
        case .key?, .priority?, nil:
            break
        }
        return QueryExplanation(path: path.description, rules: rules.location(of: path), index: query?.index.description, use: use,
                                declared: declared, unindexed: rules.warnsUnindexed(query, at: path), children: children,
                                ordered: use == .built ? children : 0, returned: returned, micros: micros, listens: listens,
                                indexOn: indexOn)
    }
}
