import Foundation
import Dispatch
import RTDBClient
import RTDBData

/// Tab completion: command names, the command's flags and their values, and child keys of
/// the path being typed (read from the database): those that start with what is typed, or
/// when none does, those that hold it anywhere (`ada` finds `-Nx9ada`).
public struct Completer {
    /// Child keys at a path, or nil when it cannot be read.
    public var childKeys: (Path) -> [(key: String, hasChildren: Bool)]?
    /// The fields of the first few children at a path (for `--orderByChild`), or nil when
    /// they cannot be read.
    public var childFields: (Path) -> [String]?

    public init(childKeys: @escaping (Path) -> [(key: String, hasChildren: Bool)]?,
                childFields: @escaping (Path) -> [String]? = { _ in nil }) {
        self.childKeys = childKeys
        self.childFields = childFields
    }

    public struct Completion: Equatable {
        /// The word being completed as typed.
        public var word: String
        /// Full replacements for the word; each ends with " " or "/" when complete. They
        /// start with the word, except keys found inside (`replaces`).
        public var candidates: [String]
        /// The candidates hold the word inside them, not at their start: one replaces it.
        public var replaces = false
    }

    /// How many children `--orderByChild` looks at for field names.
    static let sampledChildren = 5

    /// Completions for the last word of `line` (the text before the cursor).
    public func complete(_ line: String, cwd: Path) -> Completion {
        let endsWithSpace = line.last == " " || line.isEmpty
        var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let word = endsWithSpace ? "" : (words.popLast() ?? "")
        if words.isEmpty {
            let names = CommandSpec.all.flatMap { [$0.name] + $0.aliases }.filter { $0.hasPrefix(word) }.sorted()
            return Completion(word: word, candidates: names.map { $0 + " " })
        }
        guard let spec = CommandSpec.find(words[0]) else { return Completion(word: word, candidates: []) }
        let typed = Array(words.dropFirst())
        let reading = ArgumentReading(typed.map { Token(text: $0, column: 0, kind: .word) }, spec: spec)
        // Past a wrapping command's own count and flags, the words are a command line of their own.
        if let wrapped = reading.wrapped { return complete(typed[wrapped...].joined(separator: " ") + " " + word, cwd: cwd) }
        let arguments = reading.arguments(of: typed)
        if case .value(let flag) = reading.next {
            return Completion(word: word, candidates: values(of: flag, arguments: arguments, cwd: cwd).filter { $0.hasPrefix(word) }.map { $0 + " " })
        }
        // The word is a query bound's KEY, unless it is a flag: nothing to offer.
        if case .key = reading.next, !word.hasPrefix("-") { return Completion(word: word, candidates: []) }
        // A flag as the parser sees one; "-Nx8…" is a push id.
        if word.hasPrefix("--") || (word.hasPrefix("-") && word.count <= 2) {
            // --flag=VALUE completes its value in place.
            if let equals = word.firstIndex(of: "="), let flag = spec.allFlags.first(where: { $0.name == word[..<equals] }) {
                let head = String(word[...equals])
                let typed = word[word.index(after: equals)...]
                return Completion(word: word, candidates: values(of: flag, arguments: arguments, cwd: cwd).filter { $0.hasPrefix(typed) }.map { head + $0 + " " })
            }
            let flags = spec.allFlags.map(\.name).filter { $0.hasPrefix(word) }
            return Completion(word: word, candidates: flags.map { $0 + " " })
        }
        if spec.argument == .command {
            return Completion(word: word, candidates: CommandSpec.all.map(\.name).filter { $0.hasPrefix(word) }.map { $0 + " " })
        }
        let before = arguments.joined(separator: " ")
        if let choices = spec.words[before] {
            return Completion(word: word, candidates: choices.filter { $0.hasPrefix(word) }.map { $0 + " " })
        }
        // The first argument of the data commands is a path, and some arguments of others.
        guard (arguments.isEmpty && spec.argument == .path) || spec.argument == .paths || spec.pathAfter.contains(before) else {
            return Completion(word: word, candidates: [])
        }
        let slash = word.lastIndex(of: "/")
        let directory = slash.map { String(word[...$0]) } ?? ""
        let partial = slash.map { String(word[word.index(after: $0)...]) } ?? word
        let parent = CommandParser.resolve(directory.isEmpty ? "." : directory, cwd: cwd)
        guard let children = childKeys(parent) else { return Completion(word: word, candidates: []) }
        var matches = children.filter { $0.key.hasPrefix(partial) }
        // Push ids and other generated keys are found by a part of them.
        let inside = matches.isEmpty && !partial.isEmpty
        if inside { matches = children.filter { $0.key.range(of: partial, options: .caseInsensitive) != nil } }
        return Completion(word: word, candidates: matches.map { directory + $0.key + ($0.hasChildren ? "/" : " ") }, replaces: inside)
    }

    /// What a flag's value may be: its fixed choices, or for `--orderByChild` the fields of
    /// the first children at the command's path.
    private func values(of flag: CommandSpec.Flag, arguments: [String], cwd: Path) -> [String] {
        if !flag.choices.isEmpty { return flag.choices }
        guard flag.name == "--orderByChild" else { return [] }
        let path = arguments.first.map { CommandParser.resolve($0, cwd: cwd) } ?? cwd
        return childFields(path) ?? []
    }

    /// The longest prefix shared by every candidate.
    public static func commonPrefix(_ candidates: [String]) -> String {
        guard var prefix = candidates.first else { return "" }
        for c in candidates.dropFirst() {
            while !c.hasPrefix(prefix) { prefix.removeLast() }
        }
        return prefix
    }
}

extension Completer {
    private static let keyReads = CompletionReads<[(key: String, hasChildren: Bool)]>()
    private static let fieldReads = CompletionReads<[String]>()

    /// The child keys at `path`, read from the client core for Tab completion (see
    /// `CompletionReads`: a slow answer comes on the next Tab).
    static func childKeys(of path: Path, in repo: @escaping @Sendable () async -> Repo) -> [(key: String, hasChildren: Bool)]? {
        keyReads.value(at: path.description) { try await repo().get(path).children.map { (key: $0.key.name, hasChildren: !$0.value.isLeaf) } }
    }

    /// The fields of the first `sampledChildren` children at `path` (in key order), each
    /// once, in the order they first appear.
    static func childFields(of path: Path, in repo: @escaping @Sendable () async -> Repo) -> [String]? {
        fieldReads.value(at: path.description) {
            var params = QueryParams().limitToFirst(sampledChildren)
            params.index = .key
            let query = QuerySpec(path: path, params: params)
            var fields: [String] = []
            for (_, child) in try await repo().get(query).children {
                for (key, _) in child.children where !fields.contains(key.name) { fields.append(key.name) }
            }
            return fields
        }
    }
}
