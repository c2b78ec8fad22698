import Dispatch
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
        let started = DispatchTime.now().uptimeNanoseconds
        let node = root.child(at: path)
        let children = node.childCount
        guard let query, !query.loadsAllData else {
            return .success(QueryExplanation(path: path.description, index: query.map(\.index.description), use: .whole, declared: false,
                                             unindexed: false, children: children, ordered: 0, returned: children,
                                             micros: Self.micros(since: started), listens: 0, add: nil))
        }
        let key = QueryIndexes.key(path, query.index)
        let use: QueryExplanation.Use
        if query.index == .key {
            use = .keyOrder
        } else if let index = indexes[key], !index.isStale {
            use = index.isStored ? .stored : .kept
        } else {
            use = .built
        }
        let answered = answer(query, at: path, on: node)
        let micros = Self.micros(since: started)
        let declared = declares(query.index, at: path)
        // Key and priority order need no `.indexOn` (Firebase keeps both for every location).
        var add: QueryExplanation.Advice?
        switch query.index {
        case .child, .value:
            if !declared {
                add = QueryExplanation.Advice(rules: rules.location(of: path), indexOn: rules.indexOn(at: path) + [query.index.description])
            }
        case .key, .priority:
            break
        }
        return .success(QueryExplanation(path: path.description, index: query.index.description, use: use, declared: declared,
                                         unindexed: unindexed(query, at: path), children: children,
                                         ordered: use == .built ? children : 0, returned: answered.childCount, micros: micros,
                                         listens: indexListens[key] ?? 0, add: add))
    }

    private static func micros(since started: UInt64) -> Int {
        Int(clamping: (DispatchTime.now().uptimeNanoseconds &- started) / 1000)
    }
}
