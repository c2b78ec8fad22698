/// The regular expressions of `matches(/…/)`: literals, `.`, classes (`[a-z]`, `[^…]`, `\d`,
/// `\w`, `\s` and their negations), groups, `|`, `*`, `+`, `?`, `{n,m}`, anchors `^` and `$`,
/// and the `i` flag. Matched as JavaScript's `test()` does (anywhere unless anchored), by a
/// Thompson automaton: time grows linearly with the string, whatever the pattern, so data
/// written by a user cannot make a rule run for long.
public struct RuleRegex: Sendable {
    private enum Instruction: Sendable {
        case scalar(Unicode.Scalar)
        case set(ScalarSet)
        case any
        case split(Int, Int)
        case jump(Int)
        case lineStart
        case lineEnd
        case match
    }

    private let program: [Instruction]
    private let ignoringCase: Bool
    /// A pattern expands `{n,m}` by copying; beyond this many instructions it is refused.
    static let maxInstructions = 20_000

    init(_ pattern: String, ignoringCase: Bool) throws(RuleSyntaxError) {
        var parser = Parser(scalars: Array(pattern.unicodeScalars), ignoringCase: ignoringCase)
        let tree = try parser.parse()
        var program: [Instruction] = []
        var steps = 0
        try Self.emit(tree, into: &program, steps: &steps)
        program.append(.match)
        self.program = program
        self.ignoringCase = ignoringCase
    }

    /// Whether the pattern matches somewhere in `text`.
    public func matches(_ text: String) -> Bool {
        var unlimited = Int.max
        return matches(text, budget: &unlimited) ?? false
    }

    /// As `matches`, taking from `budget` a step per thread at each position of the text;
    /// nil (and the budget spent) when the match would take more.
    public func matches(_ text: String, budget: inout Int) -> Bool? {
        let input = Array(text.unicodeScalars)
        var current = ThreadList(capacity: program.count)
        var next = ThreadList(capacity: program.count)
        for position in 0...input.count {
            // Unanchored: a new thread may start at every position.
            if add(0, at: position, count: input.count, to: &current) { return true }
            budget -= current.items.count + 1
            if budget < 0 { return nil }
            guard position < input.count else { break }
            let c = ignoringCase ? Self.folded(input[position]) : input[position]
            next.clear()
            for pc in current.items {
                let step: Bool
                switch program[pc] {
                case .scalar(let s): step = s == c
                case .set(let set): step = set.contains(c)
                case .any: step = c != "\n" && c != "\r"
                default: step = false
                }
                if step, add(pc + 1, at: position + 1, count: input.count, to: &next) { return true }
            }
            swap(&current, &next)
            next.clear()
        }
        return false
    }

    /// Follows jumps and splits from `pc`; true when a match is reached.
    private func add(_ pc: Int, at position: Int, count: Int, to list: inout ThreadList) -> Bool {
        var stack = [pc]
        while let pc = stack.popLast() {
            guard list.insert(pc) else { continue }
            switch program[pc] {
            case .match: return true
            case .jump(let target): stack.append(target)
            case .split(let a, let b): stack.append(b); stack.append(a)
            case .lineStart: if position == 0 { stack.append(pc + 1) }
            case .lineEnd: if position == count { stack.append(pc + 1) }
            default: break
            }
        }
        return false
    }

    static func folded(_ c: Unicode.Scalar) -> Unicode.Scalar {
        let lower = c.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first ?? c : c
    }

    private struct ThreadList {
        private var seen: [Bool]
        private(set) var items: [Int] = []
        init(capacity: Int) { seen = Array(repeating: false, count: capacity) }
        mutating func insert(_ pc: Int) -> Bool {
            if seen[pc] { return false }
            seen[pc] = true
            items.append(pc)
            return true
        }
        mutating func clear() {
            for pc in items { seen[pc] = false }
            items.removeAll(keepingCapacity: true)
        }
    }

    // MARK: Parsing

    fileprivate indirect enum Tree {
        case empty
        case scalar(Unicode.Scalar)
        case set(ScalarSet)
        case any
        case lineStart, lineEnd
        case sequence([Tree])
        case alternation([Tree])
        case repetition(Tree, min: Int, max: Int?)
    }

    private struct Parser {
        let scalars: [Unicode.Scalar]
        let ignoringCase: Bool
        var index = 0

        mutating func parse() throws(RuleSyntaxError) -> Tree {
            let tree = try alternation(depth: 0)
            if index < scalars.count { throw RuleSyntaxError("unmatched ')'", at: index) }
            return tree
        }

        mutating func alternation(depth: Int) throws(RuleSyntaxError) -> Tree {
            guard depth < 50 else { throw RuleSyntaxError("groups are nested too deeply", at: index) }
            var branches = [try sequence(depth: depth)]
            while index < scalars.count, scalars[index] == "|" {
                index += 1
                branches.append(try sequence(depth: depth))
            }
            return branches.count == 1 ? branches[0] : .alternation(branches)
        }

        mutating func sequence(depth: Int) throws(RuleSyntaxError) -> Tree {
            var items: [Tree] = []
            while index < scalars.count, scalars[index] != "|", scalars[index] != ")" {
                var atom = try self.atom(depth: depth)
                while let (min, max) = try quantifier() {
                    if case .lineStart = atom { throw RuleSyntaxError("nothing to repeat", at: index - 1) }
                    atom = .repetition(atom, min: min, max: max)
                }
                items.append(atom)
            }
            return items.count == 1 ? items[0] : .sequence(items)
        }

        mutating func quantifier() throws(RuleSyntaxError) -> (Int, Int?)? {
            guard index < scalars.count else { return nil }
            let result: (Int, Int?)
            switch scalars[index] {
            case "*": result = (0, nil); index += 1
            case "+": result = (1, nil); index += 1
            case "?": result = (0, 1); index += 1
            case "{":
                let start = index
                guard let bounds = braces() else { return nil }
                guard bounds.1.map({ $0 >= bounds.0 }) ?? true, bounds.0 <= 1000, (bounds.1 ?? 0) <= 1000 else {
                    throw RuleSyntaxError("invalid repetition count (at most 1000)", at: start)
                }
                result = bounds
            default: return nil
            }
            // A lazy quantifier matches the same strings.
            if index < scalars.count, scalars[index] == "?" { index += 1 }
            return result
        }

        /// `{n}`, `{n,}` or `{n,m}`; nil (and nothing consumed) when it is not one.
        mutating func braces() -> (Int, Int?)? {
            var i = index + 1
            func digits() -> Int? {
                var value = 0, seen = false
                while i < scalars.count, let d = scalars[i].properties.numericType == .decimal ? Int(String(scalars[i])) : nil {
                    value = min(value * 10 + d, 100_000)
                    seen = true
                    i += 1
                }
                return seen ? value : nil
            }
            guard let low = digits() else { return nil }
            var high: Int? = low
            if i < scalars.count, scalars[i] == "," {
                i += 1
                high = digits()
            }
            guard i < scalars.count, scalars[i] == "}" else { return nil }
            index = i + 1
            return (low, high)
        }

        mutating func atom(depth: Int) throws(RuleSyntaxError) -> Tree {
            let c = scalars[index]
            index += 1
            switch c {
            case "(":
                if index + 1 < scalars.count, scalars[index] == "?" {
                    guard scalars[index + 1] == ":" else { throw RuleSyntaxError("only (?: …) groups are supported", at: index) }
                    index += 2
                }
                let inner = try alternation(depth: depth + 1)
                guard index < scalars.count, scalars[index] == ")" else { throw RuleSyntaxError("missing ')'", at: index) }
                index += 1
                return inner
            case "[": return .set(try set())
            case ".": return .any
            case "^": return .lineStart
            case "$": return .lineEnd
            case "*", "+", "?": throw RuleSyntaxError("nothing to repeat", at: index - 1)
            case "\\": return try escape(inSet: false).map { .set($0) } ?? literal(scalars[index - 1])
            default: return literal(c)
            }
        }

        func literal(_ c: Unicode.Scalar) -> Tree { .scalar(ignoringCase ? RuleRegex.folded(c) : c) }

        /// After a backslash: a class (`\d`) as a set, or nil with the escaped scalar at `index - 1`.
        mutating func escape(inSet: Bool) throws(RuleSyntaxError) -> ScalarSet? {
            guard index < scalars.count else { throw RuleSyntaxError("'\\' at the end of the pattern", at: index - 1) }
            let c = scalars[index]
            index += 1
            switch c {
            case "d", "D", "w", "W", "s", "S": return ScalarSet(class: c)
            case "1"..."9": throw RuleSyntaxError("back-references are not supported", at: index - 2)
            case "b", "B":
                if inSet { return nil }
                throw RuleSyntaxError("word boundaries (\\b) are not supported", at: index - 2)
            default: return nil
            }
        }

        mutating func set() throws(RuleSyntaxError) -> ScalarSet {
            var set = ScalarSet()
            let start = index - 1
            if index < scalars.count, scalars[index] == "^" { set.negated = true; index += 1 }
            var first = true
            while index < scalars.count, scalars[index] != "]" || first {
                first = false
                var low = scalars[index]
                index += 1
                if low == "\\" {
                    if let inner = try escape(inSet: true) { set.classes.append(inner); continue }
                    low = Self.control(scalars[index - 1])
                }
                var high = low
                if index + 1 < scalars.count, scalars[index] == "-", scalars[index + 1] != "]" {
                    index += 1
                    high = scalars[index]
                    index += 1
                    if high == "\\" {
                        guard index < scalars.count else { break }
                        high = Self.control(scalars[index])
                        index += 1
                    }
                    guard low.value <= high.value else { throw RuleSyntaxError("range out of order in a character class", at: index - 1) }
                }
                set.add(low, high, ignoringCase: ignoringCase)
            }
            guard index < scalars.count else { throw RuleSyntaxError("missing ']'", at: start) }
            index += 1
            return set
        }

        static func control(_ c: Unicode.Scalar) -> Unicode.Scalar {
            switch c {
            case "n": return "\n"
            case "t": return "\t"
            case "r": return "\r"
            default: return c
            }
        }
    }

    // MARK: Compiling

    /// `steps` counts the work as well as the output: a repetition of something empty emits
    /// nothing, and nested ones must not run for long either.
    private static func emit(_ tree: Tree, into program: inout [Instruction], steps: inout Int) throws(RuleSyntaxError) {
        steps += 1
        guard program.count < maxInstructions, steps < maxInstructions * 4 else { throw RuleSyntaxError("the pattern is too large", at: 0) }
        switch tree {
        case .empty: break
        case .scalar(let s): program.append(.scalar(s))
        case .set(let set): program.append(.set(set))
        case .any: program.append(.any)
        case .lineStart: program.append(.lineStart)
        case .lineEnd: program.append(.lineEnd)
        case .sequence(let items): for item in items { try emit(item, into: &program, steps: &steps) }
        case .alternation(let branches):
            var jumps: [Int] = []
            for (i, branch) in branches.enumerated() {
                if i == branches.count - 1 { try emit(branch, into: &program, steps: &steps); break }
                let split = program.count
                program.append(.split(split + 1, 0))
                try emit(branch, into: &program, steps: &steps)
                jumps.append(program.count)
                program.append(.jump(0))
                program[split] = .split(split + 1, program.count)
            }
            for jump in jumps { program[jump] = .jump(program.count) }
        case let .repetition(inner, min, max):
            for _ in 0..<min { try emit(inner, into: &program, steps: &steps) }
            if let max {
                // Each optional copy may be skipped to the end.
                var splits: [Int] = []
                for _ in min..<max {
                    splits.append(program.count)
                    program.append(.split(0, 0))
                    try emit(inner, into: &program, steps: &steps)
                }
                for split in splits { program[split] = .split(split + 1, program.count) }
            } else {
                let loop = program.count
                program.append(.split(0, 0))
                try emit(inner, into: &program, steps: &steps)
                program.append(.jump(loop))
                program[loop] = .split(loop + 1, program.count)
            }
        }
    }
}

/// A character class: ranges of scalars, classes such as `\d`, possibly negated.
struct ScalarSet: Sendable {
    var ranges: [ClosedRange<UInt32>] = []
    var classes: [ScalarSet] = []
    var negated = false
    /// `d`, `w` or `s` (lowercase) for the built-in classes.
    private var builtIn: Unicode.Scalar?

    init() {}

    init(class c: Unicode.Scalar) {
        builtIn = Unicode.Scalar(c.value | 0x20)
        negated = c.properties.isUppercase
    }

    mutating func add(_ low: Unicode.Scalar, _ high: Unicode.Scalar, ignoringCase: Bool) {
        ranges.append(low.value...high.value)
        guard ignoringCase else { return }
        // Folded input is compared, so a range of capitals also matches their lowercase forms.
        for value in low.value...min(high.value, low.value + 512) {
            if let scalar = Unicode.Scalar(value) {
                let folded = RuleRegex.folded(scalar).value
                if folded != value { ranges.append(folded...folded) }
            }
        }
    }

    func contains(_ c: Unicode.Scalar) -> Bool {
        var found: Bool
        switch builtIn {
        case "d": found = ("0"..."9").contains(c)
        case "w": found = ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_"
        case "s": found = c.properties.isWhitespace
        default:
            found = ranges.contains { $0.contains(c.value) } || classes.contains { $0.contains(c) }
        }
        return found != negated
    }
}
