import RTDBData

/// Parses one rule expression and checks its types, JavaScript precedence from `?:` (lowest)
/// to member access and calls (highest). A rule must be a boolean: anything else, a method a
/// value cannot have, an unknown variable, is an error with the offset of its token.
struct RuleParser {
    private let tokens: [RuleToken]
    private var position = 0
    private let kind: RuleKind
    private let bound: Set<String>
    /// Nesting so far: parentheses, operators and calls recurse, and are bounded so that no
    /// text can exhaust the stack of the parser or of the evaluator.
    private var depth = 0
    static let maxDepth = 256
    /// The number the next term gets (see `RuleTerm.id`).
    private var nextID: Int

    /// `bound`: the `$` variables of the wildcards above the rule; `ids`: the number of the
    /// rule's first term, and after, the number after its last.
    static func parse(_ text: String, kind: RuleKind, bound: Set<String>, ids: inout Int) throws(RuleSyntaxError) -> RuleTerm {
        var parser = RuleParser(tokens: try RuleLexer.tokens(text), kind: kind, bound: bound, nextID: ids)
        let (expression, type) = try parser.conditional()
        ids = parser.nextID
        guard parser.current.kind == .end else {
            throw RuleSyntaxError("unexpected \(parser.current.described)", at: parser.current.offset)
        }
        guard type.fits(.boolean) else {
            throw RuleSyntaxError("a \(kind.rawValue) rule must be a boolean expression, and this one is \(type)", at: 0)
        }
        return expression
    }

    private init(tokens: [RuleToken], kind: RuleKind, bound: Set<String>, nextID: Int) {
        self.tokens = tokens
        self.kind = kind
        self.bound = bound
        self.nextID = nextID
    }

    private typealias Typed = (RuleTerm, RuleType)

    /// `expression` as a term that starts at `start` and ends with the last token taken.
    private mutating func term(_ expression: RuleExpression, from start: Int) -> RuleTerm {
        defer { nextID += 1 }
        return RuleTerm(expression: expression, span: start..<tokens[max(0, position - 1)].end, id: nextID)
    }

    private var current: RuleToken { tokens[min(position, tokens.count - 1)] }

    private mutating func take(_ symbol: String) -> Bool {
        guard current.kind == .symbol(symbol) else { return false }
        position += 1
        return true
    }

    private mutating func expect(_ symbol: String, _ context: String) throws(RuleSyntaxError) {
        guard take(symbol) else { throw RuleSyntaxError("expected '\(symbol)' \(context), found \(current.described)", at: current.offset) }
    }

    private func require(_ type: RuleType, _ expected: RuleType, _ what: String, at offset: Int) throws(RuleSyntaxError) {
        guard type.fits(expected) else { throw RuleSyntaxError("\(what) must be \(expected), not \(type)", at: offset) }
    }

    private mutating func nest() throws(RuleSyntaxError) {
        depth += 1
        guard depth <= Self.maxDepth else { throw RuleSyntaxError("the expression is nested too deeply (more than \(Self.maxDepth) levels)", at: current.offset) }
    }

    private mutating func conditional() throws(RuleSyntaxError) -> Typed {
        try nest()
        defer { depth -= 1 }
        let start = current.offset
        let condition = try or()
        guard take("?") else { return condition }
        try require(condition.1, .boolean, "the condition before '?'", at: start)
        let yes = try conditional()
        try expect(":", "in a ?: expression")
        let no = try conditional()
        return (term(.conditional(condition.0, yes.0, no.0), from: start), yes.1 == no.1 ? yes.1 : .any)
    }

    private mutating func or() throws(RuleSyntaxError) -> Typed {
        try logical("||", RuleExpression.or) { parser throws(RuleSyntaxError) in try parser.and() }
    }

    private mutating func and() throws(RuleSyntaxError) -> Typed {
        try logical("&&", RuleExpression.and) { parser throws(RuleSyntaxError) in try parser.equality() }
    }

    /// `operand (symbol operand)*`, every operand a boolean, grouped from the left.
    private mutating func logical(_ symbol: String, _ make: (RuleTerm, RuleTerm) -> RuleExpression,
                                  _ operand: (inout RuleParser) throws(RuleSyntaxError) -> Typed) throws(RuleSyntaxError) -> Typed {
        var levels = 0
        defer { depth -= levels }
        var start = current.offset
        var left = try operand(&self)
        while take(symbol) {
            try nest()
            levels += 1
            try require(left.1, .boolean, "each side of '\(symbol)'", at: start)
            start = current.offset
            let right = try operand(&self)
            try require(right.1, .boolean, "each side of '\(symbol)'", at: start)
            left = (term(make(left.0, right.0), from: left.0.span.lowerBound), .boolean)
        }
        return left
    }

    private mutating func equality() throws(RuleSyntaxError) -> Typed {
        var levels = 0
        defer { depth -= levels }
        var left = try comparison()
        while true {
            let op: RuleOperator
            let start = current.offset
            if take("==") || take("===") { op = .equal } else if take("!=") || take("!==") { op = .notEqual } else { return left }
            try nest()
            levels += 1
            let right = try comparison()
            for side in [left.1, right.1] where [.snapshot, .query, .regex].contains(side) {
                let hint = side == .snapshot ? " (compare its val(), or use exists())" : ""
                throw RuleSyntaxError("\(side) cannot be compared\(hint)", at: start)
            }
            left = (term(.binary(op, left.0, right.0), from: left.0.span.lowerBound), .boolean)
        }
    }

    private mutating func comparison() throws(RuleSyntaxError) -> Typed {
        var levels = 0
        defer { depth -= levels }
        var left = try additive()
        while true {
            let start = current.offset
            let op: RuleOperator
            if take("<=") { op = .lessOrEqual } else if take(">=") { op = .greaterOrEqual }
            else if take("<") { op = .less } else if take(">") { op = .greater } else { return left }
            try nest()
            levels += 1
            let right = try additive()
            for side in [left.1, right.1] where !(side.fits(.number) || side.fits(.string)) {
                throw RuleSyntaxError("'\(op.rawValue)' compares numbers or strings, not \(side)", at: start)
            }
            left = (term(.binary(op, left.0, right.0), from: left.0.span.lowerBound), .boolean)
        }
    }

    private mutating func additive() throws(RuleSyntaxError) -> Typed {
        var levels = 0
        defer { depth -= levels }
        var left = try multiplicative()
        while true {
            let start = current.offset
            let op: RuleOperator
            if take("+") { op = .plus } else if take("-") { op = .minus } else { return left }
            try nest()
            levels += 1
            let right = try multiplicative()
            if op == .plus, left.1 == .string || right.1 == .string {
                for side in [left.1, right.1] where !(side.fits(.string) || side.fits(.number) || side == .boolean) {
                    throw RuleSyntaxError("'+' cannot join \(side) to a string", at: start)
                }
                left = (term(.binary(op, left.0, right.0), from: left.0.span.lowerBound), .string)
                continue
            }
            let allowed: [RuleType] = op == .plus ? [.number, .string] : [.number]
            for side in [left.1, right.1] where !allowed.contains(where: side.fits) {
                throw RuleSyntaxError("'\(op.rawValue)' needs numbers\(op == .plus ? " or strings" : ""), not \(side)", at: start)
            }
            let type: RuleType = left.1 == .number && right.1 == .number ? .number : (op == .minus ? .number : .any)
            left = (term(.binary(op, left.0, right.0), from: left.0.span.lowerBound), type)
        }
    }

    private mutating func multiplicative() throws(RuleSyntaxError) -> Typed {
        var levels = 0
        defer { depth -= levels }
        var left = try unary()
        while true {
            let start = current.offset
            let op: RuleOperator
            if take("*") { op = .times } else if take("/") { op = .divide } else if take("%") { op = .remainder } else { return left }
            try nest()
            levels += 1
            let right = try unary()
            for side in [left.1, right.1] where !side.fits(.number) {
                throw RuleSyntaxError("'\(op.rawValue)' needs numbers, not \(side)", at: start)
            }
            left = (term(.binary(op, left.0, right.0), from: left.0.span.lowerBound), .number)
        }
    }

    private mutating func unary() throws(RuleSyntaxError) -> Typed {
        try nest()
        defer { depth -= 1 }
        let start = current.offset
        if take("!") {
            let operand = try unary()
            try require(operand.1, .boolean, "the operand of '!'", at: start)
            return (term(.not(operand.0), from: start), .boolean)
        }
        if take("-") {
            let operand = try unary()
            try require(operand.1, .number, "the operand of '-'", at: start)
            return (term(.negate(operand.0), from: start), .number)
        }
        return try postfix()
    }

    private mutating func postfix() throws(RuleSyntaxError) -> Typed {
        var levels = 0
        defer { depth -= levels }
        var value = try primary()
        while true {
            let start = current.offset
            if take("[") {
                try nest()
                levels += 1
                let index = try conditional()
                try expect("]", "to close the index")
                guard value.1 == .any else { throw RuleSyntaxError("\(value.1) cannot be indexed with [ ]", at: start) }
                value = (term(.index(value.0, index.0), from: value.0.span.lowerBound), .any)
                continue
            }
            guard take(".") else { return value }
            try nest()
            levels += 1
            guard case .identifier(let name) = current.kind else {
                throw RuleSyntaxError("expected a name after '.', found \(current.described)", at: current.offset)
            }
            let nameOffset = current.offset
            position += 1
            if current.kind == .symbol("(") {
                value = try call(on: value, name, at: nameOffset)
            } else {
                value = try member(of: value, name, at: nameOffset)
            }
        }
    }

    private mutating func member(of value: Typed, _ name: String, at offset: Int) throws(RuleSyntaxError) -> Typed {
        let start = value.0.span.lowerBound
        switch value.1 {
        case .any: return (term(.member(value.0, name), from: start), .any)
        case .string:
            guard name == "length" else { throw RuleSyntaxError("a string has no property '\(name)' (it has length)", at: offset) }
            return (term(.member(value.0, name), from: start), .number)
        case .query:
            guard let type = RuleQuery.propertyType(name) else {
                throw RuleSyntaxError("the query has no property '\(name)'; it has \(RuleQuery.propertyNames.joined(separator: ", "))", at: offset)
            }
            return (term(.member(value.0, name), from: start), type)
        case .snapshot:
            let hint = RuleMethod(rawValue: name) != nil ? "; call it: \(name)()" : "; use child('\(name)')"
            throw RuleSyntaxError("a data snapshot has no property '\(name)'\(hint)", at: offset)
        default:
            throw RuleSyntaxError("\(value.1) has no property '\(name)'", at: offset)
        }
    }

    private mutating func call(on value: Typed, _ name: String, at offset: Int) throws(RuleSyntaxError) -> Typed {
        try expect("(", "to start the arguments")
        var arguments: [Typed] = []
        var offsets: [Int] = []
        if !take(")") {
            repeat {
                offsets.append(current.offset)
                arguments.append(try conditional())
            } while take(",")
            try expect(")", "after the arguments")
        }
        guard let method = RuleMethod(rawValue: name) else {
            throw RuleSyntaxError("unknown method '\(name)()'", at: offset)
        }
        switch value.1 {
        case .snapshot where method.onSnapshot, .string where !method.onSnapshot, .any where !method.onSnapshot:
            break
        case .snapshot:
            throw RuleSyntaxError("a data snapshot has no method '\(name)()'; call it on val()", at: offset)
        default:
            throw RuleSyntaxError("\(value.1) has no method '\(name)()'", at: offset)
        }
        let parameters = method.parameters
        let optional = method == .hasChildren
        guard arguments.count == parameters.count || (optional && arguments.isEmpty) else {
            let count = parameters.count
            throw RuleSyntaxError("\(name)() takes \(optional ? "no argument or " : "")\(count == 0 ? "no" : "\(count)") argument\(count == 1 ? "" : "s"), not \(arguments.count)", at: offset)
        }
        for (i, argument) in arguments.enumerated() {
            try require(argument.1, parameters[i], "argument \(i + 1) of \(name)()", at: offsets[i])
            if argument.1 == .regex && method != .matches {
                throw RuleSyntaxError("a regular expression can only be the argument of matches()", at: offsets[i])
            }
        }
        // A constant path is split and checked now: a mistake is found when the rules load.
        let start = value.0.span.lowerBound
        if method == .child || method == .hasChild, value.1 == .snapshot, case .constant(.string(let text))? = arguments.first?.0.expression {
            let path = Path(text)
            if path.isRoot || path.keys.contains(where: { Path.problem(with: $0) != nil }) {
                throw RuleSyntaxError("\(name)() needs a valid child path, not '\(text)'", at: offsets[0])
            }
            return (term(method == .child ? .child(value.0, path) : .hasChild(value.0, path), from: start), method.result)
        }
        return (term(.call(value.0, method, arguments.map(\.0)), from: start), method.result)
    }

    private mutating func primary() throws(RuleSyntaxError) -> Typed {
        let token = current
        position += 1
        switch token.kind {
        case .number(let n): return (term(.constant(.number(n)), from: token.offset), .number)
        case .string(let s): return (term(.constant(.string(s)), from: token.offset), .string)
        case .regex(let pattern, let flags):
            do {
                return (term(.constant(.regex(try RuleRegex(pattern, ignoringCase: flags.contains("i")))), from: token.offset), .regex)
            } catch {
                throw RuleSyntaxError("invalid regular expression: \(error.message)", at: token.offset + 1 + error.offset)
            }
        case .variable(let name):
            guard bound.contains(name) else {
                throw RuleSyntaxError("unknown variable \(name): no wildcard above this rule is named \(name)", at: token.offset)
            }
            return (term(.bound(name), from: token.offset), .string)
        case .identifier(let name):
            switch name {
            case "true": return (term(.constant(.bool(true)), from: token.offset), .boolean)
            case "false": return (term(.constant(.bool(false)), from: token.offset), .boolean)
            case "null": return (term(.constant(.null), from: token.offset), .any)
            default: break
            }
            guard let variable = RuleVariable(rawValue: name) else {
                throw RuleSyntaxError("unknown variable '\(name)'; rules know auth, now, root, data, newData, query and $ wildcards", at: token.offset)
            }
            guard kind.allows(variable) else {
                throw RuleSyntaxError("\(name) is not available in \(kind.rawValue) rules", at: token.offset)
            }
            let types: [RuleVariable: RuleType] = [.auth: .any, .now: .number, .root: .snapshot, .data: .snapshot, .newData: .snapshot, .query: .query]
            return (term(.variable(variable), from: token.offset), types[variable] ?? .any)
        case .symbol("("):
            let inner = try conditional()
            try expect(")", "to close the parenthesis")
            // The same term, its place widened to the parentheses: a trace that shows its
            // text keeps the grouping.
            let widened = RuleTerm(expression: inner.0.expression, span: token.offset..<tokens[max(0, position - 1)].end, id: inner.0.id)
            return (widened, inner.1)
        case .symbol("["):
            var elements: [RuleTerm] = []
            if !take("]") {
                repeat {
                    let start = current.offset
                    let element = try conditional()
                    try require(element.1, .string, "an array element", at: start)
                    elements.append(element.0)
                } while take(",")
                try expect("]", "to close the array")
            }
            // An array of constants is made once.
            var constants: [RuleValue] = []
            for element in elements {
                guard case .constant(let value) = element.expression else { return (term(.array(elements), from: token.offset), .array) }
                constants.append(value)
            }
            return (term(.constant(.array(constants)), from: token.offset), .array)
        default:
            throw RuleSyntaxError("expected a value, found \(token.described)", at: token.offset)
        }
    }
}
