import Dispatch
import RTDBClient
import RTDBData

/// Tab completion: command names, the command's flags, and child keys of the path being typed
/// (read from the database).
public struct Completer {
    /// Child keys at a path, or nil when it cannot be read.
    public var childKeys: (Path) -> [(key: String, hasChildren: Bool)]?

    public init(childKeys: @escaping (Path) -> [(key: String, hasChildren: Bool)]?) {
        self.childKeys = childKeys
    }

    public struct Completion: Equatable {
        /// The word being completed as typed.
        public var word: String
        /// Full replacements for the word; each ends with " " or "/" when complete.
        public var candidates: [String]
    }

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
        if spec.wrapsCommand {
            // Past its own count and flags, the words are a command line of their own.
            var start = 1
            while start < words.count, Int(words[start]) != nil || words[start].hasPrefix("-") {
                start += words[start].hasPrefix("-") && spec.allFlags.first(where: { $0.name == words[start] })?.value != nil ? 2 : 1
            }
            if start < words.count { return complete(words[start...].joined(separator: " ") + " " + word, cwd: cwd) }
        }
        if word.hasPrefix("-") {
            let flags = spec.allFlags.map(\.name).filter { $0.hasPrefix(word) }
            return Completion(word: word, candidates: flags.map { $0 + " " })
        }
        if spec.argument == .command {
            return Completion(word: word, candidates: CommandSpec.all.map(\.name).filter { $0.hasPrefix(word) }.map { $0 + " " })
        }
        let arguments = words.dropFirst().filter { !$0.hasPrefix("-") }
        let before = arguments.joined(separator: " ")
        if let choices = spec.words[before] {
            return Completion(word: word, candidates: choices.filter { $0.hasPrefix(word) }.map { $0 + " " })
        }
        // The first argument of the data commands is a path, and some arguments of others.
        guard (arguments.isEmpty && spec.argument == .path) || spec.pathAfter.contains(before) else {
            return Completion(word: word, candidates: [])
        }
        let slash = word.lastIndex(of: "/")
        let directory = slash.map { String(word[...$0]) } ?? ""
        let partial = slash.map { String(word[word.index(after: $0)...]) } ?? word
        let parent = CommandParser.resolve(directory.isEmpty ? "." : directory, cwd: cwd)
        guard let children = childKeys(parent) else { return Completion(word: word, candidates: []) }
        let matches = children.filter { $0.key.hasPrefix(partial) }
        return Completion(word: word, candidates: matches.map { directory + $0.key + ($0.hasChildren ? "/" : " ") })
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
    /// The child keys at `path`, read from the client core for Tab completion.
    ///
    /// libedit asks synchronously, on the line editor's own thread: that thread waits (2 s at
    /// most) while a task reads. The core's queue is never the one waiting, so this cannot
    /// deadlock it.
    static func childKeys(of path: Path, in repo: @escaping @Sendable () async -> Repo) -> [(key: String, hasChildren: Bool)]? {
        let keys = OneShot<[(key: String, hasChildren: Bool)]>()
        let done = DispatchSemaphore(value: 0)
        let reading = Task {
            do {
                keys.resolve(.success(try await repo().get(path).children.map { (key: $0.key.name, hasChildren: !$0.value.isLeaf) }))
            } catch {
                keys.resolve(.failure(error))
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + 2) == .success, case .success(let found)? = keys.current else {
            reading.cancel()
            return nil
        }
        return found
    }
}
