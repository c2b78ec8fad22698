import RTDBClient
import RTDBData
import RTDBProtocol

/// `get --explain`, `query --explain`: how the database answers a read, from the database
/// itself (the embedded one, or rtdb serve), not from this session's cache.
extension Shell {
    func explain(_ query: QuerySpec, json: Bool) async throws {
        guard let explainer = options.explainer else { throw ShellError("this database does not explain its reads") }
        // The server answers as of the writes it has: this session's come first.
        try await writesAcknowledged(before: "explained")
        let explanation: QueryExplanation
        do {
            explanation = try await explainer.explain(query.path, query: query.params.isDefault ? nil : query.params)
        } catch let error as ShellError {
            throw error
        } catch {
            throw ShellError("\(error)")
        }
        output.write(json ? explanation.json.serialized() + "\n" : Self.describe(explanation))
    }

    /// One line per fact, each named in a column of its own:
    ///
    ///     index     age: built for this read, by ordering the location's 1,000 children (kept for the next ones)
    ///     read      1,002 children: 1,000 to build the index, 2 answered
    ///     answer    2 of 1,000 children
    ///     time      412 µs on the server
    ///     .indexOn  missing: add ".indexOn": "age" at /users in the rules
    nonisolated static func describe(_ explanation: QueryExplanation) -> String {
        func count(_ n: Int, _ noun: String = "child") -> String {
            ProfileReport.number(Double(n)) + " " + (n == 1 ? noun : noun == "child" ? "children" : noun + "s")
        }
        let index = explanation.index ?? ""
        var lines: [(String, String)] = []
        switch explanation.use {
        case .whole where explanation.index == nil:
            lines.append(("index", "none: no query, the whole location is read"))
        case .whole:
            lines.append(("index", "none: ordered by \(index) with no limit or range, the whole location is read and the client orders it"))
        case .keyOrder:
            lines.append(("index", "none needed: key order is the children's own"))
        case .kept:
            let users = explanation.listens == 0 ? "" : ", kept while \(count(explanation.listens, "listen")) \(explanation.listens == 1 ? "uses" : "use") it"
            lines.append(("index", "\(index): kept from an earlier read\(users)"))
        case .stored:
            lines.append(("index", "\(index): stored with the data"))
        case .built:
            let work = explanation.ordered == 0 ? "the location has no children to order" : "by ordering the location's \(count(explanation.ordered))"
            lines.append(("index", "\(index): built for this read, \(work) (kept for the next ones)"))
        }
        if explanation.ordered > 0 {
            lines.append(("read", "\(count(explanation.read)): \(ProfileReport.number(Double(explanation.ordered))) to build the index, \(ProfileReport.number(Double(explanation.returned))) answered"))
        } else {
            lines.append(("read", count(explanation.read)))
        }
        lines.append(("answer", "\(ProfileReport.number(Double(explanation.returned))) of \(count(explanation.children))"))
        lines.append(("time", "\(ProfileReport.number(Double(explanation.micros))) µs on the server"))
        if let indexOn = explanation.indexOn {
            let warns = explanation.unindexed ? "; until then the server warns of this query (no_index)" : ""
            // The list replaces what is declared there: say what it replaces.
            let declared = indexOn.dropLast()
            let change = declared.isEmpty ? "add \(QueryExplanation.rule(indexOn)) at \(explanation.rules) in the rules"
                                          : "at \(explanation.rules) in the rules, \(QueryExplanation.rule(Array(declared))) becomes \(QueryExplanation.rule(indexOn))"
            lines.append((".indexOn", "missing: \(change)\(warns)"))
        } else if explanation.declared {
            lines.append((".indexOn", "declared at \(explanation.rules) in the rules"))
        }
        let width = lines.map(\.0.count).max() ?? 0
        return lines.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 + "\n" }.joined()
    }
}
