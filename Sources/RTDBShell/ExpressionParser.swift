import RTDBData

/// Parses a transaction expression into an `ExpressionNode`. The grammar, loosest first (the
/// binary levels are resolved by precedence in one loop; see `parseExpression`):
///
///     expression     = "if" expression "then" expression "else" expression | or
///     or             = and { "or" and }
///     and            = not { "and" not }
///     not            = "not" not | comparison
///     comparison     = coalesce [ ("==" | "!=" | "<" | "<=" | ">" | ">=") coalesce ]
///     coalesce       = additive { "??" additive }   (right-associative; grouping does not matter)
///     additive       = multiplicative { ("+" | "-") multiplicative }
///     multiplicative = unary { ("*" | "/" | "%") unary }
///     unary          = "-" unary | postfix
///     postfix        = primary { "." name | "[" expression "]" }
///     primary        = "$" | "null" | "true" | "false" | number | string
///                    | "[" [ expression { "," expression } ] "]"
///                    | "{" [ key ":" expression { "," key ":" expression } ] "}"
///                    | function "(" [ expression { "," expression } ] ")"
///                    | "(" expression ")"
///
/// The source is untrusted: its length and nesting are bounded, so parsing cannot exhaust the
/// stack, and every token access is checked.
struct ExpressionParser {
    static let maxLength = 65_536
    /// Parentheses, brackets, braces, calls, `if`, `not` and unary minus each count one level.
    static let maxDepth = 256

    private static let keywords: Set<String> = ["and", "or", "not", "if", "then", "else", "null", "true", "false"]

    // The parser is three words, so its non-mutating helpers get `self` in registers rather
    // than as a copy in the caller's frame.

    /// Never empty: the lexer ends them with an `.end` token.
    private let tokens: [ExpressionToken]
    private var index = 0
    private var depth = 0

    static func parse(_ source: String) throws -> ExpressionNode {
        // Counting stops past the limit, so a huge input costs no more than a long one.
        if source.index(source.startIndex, offsetBy: maxLength, limitedBy: source.endIndex).map({ $0 < source.endIndex }) ?? false {
            throw ExpressionError("the expression is too long (the limit is \(maxLength) characters)", offset: maxLength)
        }
        var lexer = ExpressionLexer(source)
        var parser = ExpressionParser(tokens: try lexer.tokenize())
        let root = try parser.parseExpression()
        let trailing = parser.peek
        guard trailing.kind == .end else { throw ExpressionError(trailing.unexpectedMessage, offset: trailing.offset) }
        return root
    }

    private init(tokens: [ExpressionToken]) {
        self.tokens = tokens.isEmpty ? [ExpressionToken(kind: .end, offset: 0, text: "")] : tokens
    }

    // MARK: Tokens

    /// The current token; `advance` never moves past the last one, the end token.
    private var peek: ExpressionToken { token(at: index) }

    private var peekNext: ExpressionToken { token(at: index + 1) }

    private func token(at position: Int) -> ExpressionToken {
        if position < tokens.count { return tokens[position] }
        return tokens.last ?? ExpressionToken(kind: .end, offset: 0, text: "")
    }

    // Out of line, so the copies of the token they make take no room in the frames of the
    // recursive functions that ask.
    @inline(never)
    private func isAt(_ symbol: ExpressionSymbol) -> Bool { peek.isSymbol(symbol) }

    @inline(never)
    private func isAtName(_ name: String) -> Bool { peek.isName(name) }

    @inline(never)
    private func isAtNameToken() -> Bool {
        if case .name = peek.kind { return true }
        return false
    }

    /// Moves past the current token (never past the end token) and returns where it was.
    /// Only the offset comes back: a whole token returned by value would take a slot in the
    /// caller's frame at every call site.
    @discardableResult
    @inline(never)
    private mutating func advance() -> Int {
        let offset = peek.offset
        if index < tokens.count - 1 { index += 1 }
        return offset
    }

    /// Moves past the closing `symbol` of the opener at `openOffset`.
    private mutating func expectClosing(_ symbol: ExpressionSymbol, openedAt openOffset: Int, orComma: Bool = false) throws {
        guard isAt(symbol) else { throw closingError(symbol, openedAt: openOffset, orComma: orComma) }
        advance()
    }

    /// Counts one level of nesting at `offset`, refusing the level past the limit.
    private mutating func enter(at offset: Int) throws {
        guard depth < ExpressionParser.maxDepth else { throw ExpressionParser.tooDeepError(at: offset) }
        depth += 1
    }

    private mutating func leave() { depth -= 1 }

    // MARK: Expressions
    //
    // The functions that recurse (one nesting level costs a pass through parseExpression,
    // parseOperand, parsePrimary and the construct's own function) keep their frames small:
    // messages are built in the non-inlined error functions at the end.

    /// A full expression: an `if` form, or operands joined by operators.
    ///
    /// Operators are resolved with an explicit stack (operator precedence), so only nesting
    /// constructs recurse, and a long chain such as `1 + 1 + … + 1` takes no stack at all.
    @inline(never)
    private mutating func parseExpression() throws -> ExpressionNode {
        if isAtName("if") { return try parseConditional() }
        var operands: [Operand] = []
        var pending: [PendingOperator] = []
        while true {
            try parsePrefixNots(onto: &pending)
            operands.append(Operand(try parseOperand()))
            guard let infix = ExpressionParser.infixOperator(peek) else { break }
            let operatorOffset = advance()
            try reduce(&operands, &pending, before: infix, at: operatorOffset)
            pending.append(.binary(infix, offset: operatorOffset))
        }
        try reduce(&operands, &pending, before: nil, at: peek.offset)
        guard let result = operands.popLast(), operands.isEmpty else { throw internalError() }
        return result.node
    }

    /// An operand on the stack. A chain of one operator (`a + b - c`, `a and b and c`) stays
    /// open while it grows, so each step appends in place (rebuilding a node per step would
    /// make a long chain quadratic); `node` is the finished tree.
    private struct Operand {
        enum Chain: Equatable {
            case logic(ExpressionLogic)
            case coalesce
            /// Any mix of `+ - * / %`: a chain is a left fold, which is what left-associative
            /// operators mean, so `a * b + c` extends the chain `a * b`.
            case arithmetic
        }

        private var head: ExpressionNode
        private(set) var chain: Chain?
        /// The operands after the head, for `and`, `or` and `??`.
        private var rest: [ExpressionNode] = []
        /// The operator before each of `rest`, for `and` and `or`.
        private var operatorOffsets: [Int] = []
        private var steps: [ExpressionArithmeticStep] = []

        init(_ node: ExpressionNode) {
            head = node
        }

        /// `left infix right`, opening a chain for the operators that have one.
        init(_ left: ExpressionNode, _ infix: InfixOperator, _ right: ExpressionNode, offset: Int) {
            if case .comparison(let comparison) = infix {
                head = .comparison(comparison, left, right, offset: offset)
                return
            }
            head = left
            chain = infix.chain
            extend(infix, right, offset: offset)
        }

        mutating func extend(_ infix: InfixOperator, _ right: ExpressionNode, offset: Int) {
            switch infix {
            case .arithmetic(let operation):
                steps.append(ExpressionArithmeticStep(operation: operation, offset: offset, operand: right))
            case .logic, .coalesce:
                rest.append(right)
                operatorOffsets.append(offset)
            case .comparison:
                break  // never reached: comparisons open no chain, so none is extended
            }
        }

        var node: ExpressionNode {
            switch chain {
            case nil:
                return head
            case .logic(let logic)?:
                // The head is blamed on the first operator, as each later operand on the one before it.
                return .logical(logic, [head] + rest, operatorOffsets: [operatorOffsets.first ?? 0] + operatorOffsets)
            case .coalesce?:
                return .coalesce([head] + rest)
            case .arithmetic?:
                return .arithmetic(head, steps)
            }
        }
    }

    /// An operator waiting for its right operand.
    private enum PendingOperator {
        case not(offset: Int)
        case binary(InfixOperator, offset: Int)

        var precedence: Int {
            switch self {
            case .not: return InfixOperator.notPrecedence
            case .binary(let infix, _): return infix.precedence
            }
        }
    }

    private enum InfixOperator {
        case logic(ExpressionLogic)
        case comparison(ExpressionComparison)
        case coalesce
        case arithmetic(ExpressionArithmetic)

        /// The chain this operator builds; comparisons do not chain.
        var chain: Operand.Chain? {
            switch self {
            case .logic(let logic): return .logic(logic)
            case .comparison: return nil
            case .coalesce: return .coalesce
            case .arithmetic: return .arithmetic
            }
        }

        /// `not` sits between `and` and the comparisons.
        static let notPrecedence = 3

        /// Higher binds tighter.
        var precedence: Int {
            switch self {
            case .logic(.or): return 1
            case .logic(.and): return 2
            case .comparison: return 4
            case .coalesce: return 5
            case .arithmetic(.add), .arithmetic(.subtract): return 6
            case .arithmetic: return 7
            }
        }
    }

    private static func infixOperator(_ token: ExpressionToken) -> InfixOperator? {
        switch token.kind {
        case .name("and"): return .logic(.and)
        case .name("or"): return .logic(.or)
        case .symbol(.coalesce): return .coalesce
        case .symbol(let symbol):
            if let comparison = ExpressionComparison(rawValue: symbol.rawValue) { return .comparison(comparison) }
            if let arithmetic = ExpressionArithmetic(rawValue: symbol.rawValue) { return .arithmetic(arithmetic) }
            return nil
        default:
            return nil
        }
    }

    /// `not` may start an operand only where nothing tighter than `and` waits for it:
    /// `a and not b`, but not `a == not b`.
    @inline(never)
    private mutating func parsePrefixNots(onto pending: inout [PendingOperator]) throws {
        while isAtName("not") {
            if let top = pending.last, top.precedence > InfixOperator.notPrecedence {
                throw ExpressionError("put 'not …' in parentheses to use it as an operand", offset: peek.offset)
            }
            let offset = advance()
            try enter(at: offset)
            pending.append(.not(offset: offset))
        }
    }

    /// Applies the pending operators that bind at least as tightly as `next` (all of them when
    /// `next` is nil). Comparisons do not associate: a second one in a row is an error.
    @inline(never)
    private mutating func reduce(_ operands: inout [Operand], _ pending: inout [PendingOperator],
                                 before next: InfixOperator?, at offset: Int) throws {
        while let top = pending.last, top.precedence >= (next?.precedence ?? 0) {
            if case .comparison? = next, case .binary(.comparison, _) = top {
                throw ExpressionError("comparisons cannot be chained; combine them with 'and'", offset: offset)
            }
            pending.removeLast()
            try apply(top, to: &operands)
        }
    }

    /// Replaces the operands `pending` takes by its result. Operators that chain extend a
    /// chain of the same kind on their left: `and`, `or` and `??` are associative, and the
    /// arithmetic chain is a left fold, so `??` (right-associative in Swift) may be grouped
    /// from the left too: the result is the same.
    private mutating func apply(_ pending: PendingOperator, to operands: inout [Operand]) throws {
        guard let right = operands.popLast()?.node else { throw internalError() }
        switch pending {
        case .not(let offset):
            operands.append(Operand(.not(right, offset: offset)))
            leave()
        case .binary(let infix, let offset):
            guard let leftIndex = operands.indices.last else { throw internalError() }
            if let chain = infix.chain, operands[leftIndex].chain == chain {
                operands[leftIndex].extend(infix, right, offset: offset)
            } else {
                let left = operands.removeLast().node
                operands.append(Operand(left, infix, right, offset: offset))
            }
        }
    }

    /// `if C then A else B`; the else branch reaches as far right as it can.
    @inline(never)
    private mutating func parseConditional() throws -> ExpressionNode {
        let ifOffset = advance()
        try enter(at: ifOffset)
        defer { leave() }
        let condition = try parseExpression()
        try expectBranch("then", ifOffset: ifOffset)
        let chosen = try parseExpression()
        try expectBranch("else", ifOffset: ifOffset)
        return .conditional(condition, then: chosen, else: try parseExpression(), offset: ifOffset)
    }

    /// Moves past the `then` or `else` of the `if` at `ifOffset`.
    @inline(never)
    private mutating func expectBranch(_ keyword: String, ifOffset: Int) throws {
        guard isAtName(keyword) else {
            let what = keyword == "then" ? "'then' after the condition of" : "'else' to complete"
            throw ExpressionError("expected \(what) the 'if' at column \(ifOffset + 1), found \(peek.foundDescription)", offset: peek.offset)
        }
        advance()
    }

    /// Unary minus, a primary and its postfix chain: `-$.a[0]` is `-($.a[0])`.
    @inline(never)
    private mutating func parseOperand() throws -> ExpressionNode {
        var minusOffsets: [Int] = []
        while isAt(.minus) {
            let offset = advance()
            try enter(at: offset)
            minusOffsets.append(offset)
        }
        let base = try parsePrimary()
        var accessors: [ExpressionAccessor] = []
        while let accessor = try parseAccessor() {
            accessors.append(accessor)
        }
        var operand = accessors.isEmpty ? base : .access(base, accessors)
        for offset in minusOffsets.reversed() {
            operand = .negate(operand, offset: offset)
            leave()
        }
        return operand
    }

    /// `.name` or `[index]`, or nil when neither follows.
    @inline(never)
    private mutating func parseAccessor() throws -> ExpressionAccessor? {
        if isAt(.dot) {
            let dotOffset = advance()
            return .member(try parseMemberName(), offset: dotOffset)
        }
        guard isAt(.openBracket) else { return nil }
        let openOffset = advance()
        try enter(at: openOffset)
        defer { leave() }
        let index = try parseExpression()
        try expectClosing(.closeBracket, openedAt: openOffset)
        return .index(index, offset: openOffset)
    }

    @inline(never)
    private mutating func parseMemberName() throws -> String {
        guard case .name(let name) = peek.kind else {
            var message = "expected a name after '.', found \(peek.foundDescription)"
            if case .number = peek.kind { message += "; write [\(peek.text)] for an index" }
            throw ExpressionError(message, offset: peek.offset)
        }
        advance()
        return name
    }

    @inline(never)
    private mutating func parsePrimary() throws -> ExpressionNode {
        if isAt(.openParen) { return try parseParenthesized() }
        if isAt(.openBracket) { return try parseArray() }
        if isAt(.openBrace) { return try parseObject() }
        if isAtNameToken() { return try parseName() }
        return try parseAtom()
    }

    @inline(never)
    private mutating func parseParenthesized() throws -> ExpressionNode {
        let openOffset = advance()
        try enter(at: openOffset)
        defer { leave() }
        let inner = try parseExpression()
        try expectClosing(.closeParen, openedAt: openOffset)
        return inner
    }

    /// `$`, a number or a string.
    @inline(never)
    private mutating func parseAtom() throws -> ExpressionNode {
        let token = peek
        switch token.kind {
        case .dollar:
            advance()
            return .current(offset: token.offset)
        case .number(let value):
            advance()
            return .literal(.number(value), offset: token.offset)
        case .string(let value):
            advance()
            return .literal(.string(value), offset: token.offset)
        case .end:
            throw ExpressionError("expected a value, found end of expression", offset: token.offset)
        case .name, .symbol:
            throw ExpressionError(token.unexpectedMessage, offset: token.offset)
        }
    }

    /// A literal name, or a call.
    private mutating func parseName() throws -> ExpressionNode {
        guard let function = try functionAtPosition() else { return try parseLiteralName() }
        let offset = advance()
        return try parseCall(function, at: offset)
    }

    /// `null`, `true`, `false`, or the error for any other name where a value belongs.
    @inline(never)
    private mutating func parseLiteralName() throws -> ExpressionNode {
        let token = peek
        advance()
        switch token.kind {
        case .name("null"): return .literal(.null, offset: token.offset)
        case .name("true"): return .literal(.bool(true), offset: token.offset)
        case .name("false"): return .literal(.bool(false), offset: token.offset)
        case .name("if"):
            throw ExpressionError("put 'if … then … else …' in parentheses to use it as an operand", offset: token.offset)
        case .name("not"):
            throw ExpressionError("put 'not …' in parentheses to use it as an operand", offset: token.offset)
        case .name(let name) where !ExpressionParser.keywords.contains(name):
            throw ExpressionError("unknown name '\(name)'; the current value is $", offset: token.offset)
        default:
            throw ExpressionError(token.unexpectedMessage, offset: token.offset)
        }
    }

    /// The function the current name token names, nil for other names; an unknown name
    /// before '(' is an error.
    @inline(never)
    private func functionAtPosition() throws -> ExpressionFunction? {
        let token = peek
        guard case .name(let name) = token.kind else { return nil }
        if let function = ExpressionFunction(rawValue: name) { return function }
        if peekNext.isSymbol(.openParen) && !ExpressionParser.keywords.contains(name) {
            let known = ExpressionFunction.allCases.map { $0.rawValue + "()" }.joined(separator: ", ")
            throw ExpressionError("unknown function '\(name)'; the functions are \(known)", offset: token.offset)
        }
        return nil
    }

    /// The arguments of a call whose name was at `offset`.
    @inline(never)
    private mutating func parseCall(_ function: ExpressionFunction, at offset: Int) throws -> ExpressionNode {
        guard isAt(.openParen) else { throw callWithoutParenthesesError(function) }
        let openOffset = advance()
        try enter(at: openOffset)
        defer { leave() }
        var arguments: [ExpressionNode] = []
        if !isAt(.closeParen) {
            repeat {
                arguments.append(try parseExpression())
            } while skipComma()
        }
        try expectClosing(.closeParen, openedAt: openOffset, orComma: !arguments.isEmpty)
        guard arguments.count == function.argumentCount else {
            throw ExpressionParser.argumentCountError(function, found: arguments.count, at: offset)
        }
        return .call(function, arguments, offset: offset)
    }

    /// Moves past a ',' and says whether there was one.
    private mutating func skipComma() -> Bool {
        guard isAt(.comma) else { return false }
        advance()
        return true
    }

    @inline(never)
    private mutating func parseArray() throws -> ExpressionNode {
        let openOffset = advance()
        try enter(at: openOffset)
        defer { leave() }
        var items: [ExpressionNode] = []
        if isAt(.closeBracket) {
            advance()
            return .array(items, offset: openOffset)
        }
        repeat {
            items.append(try parseExpression())
        } while skipComma()
        try expectClosing(.closeBracket, openedAt: openOffset, orComma: true)
        return .array(items, offset: openOffset)
    }

    @inline(never)
    private mutating func parseObject() throws -> ExpressionNode {
        let openOffset = advance()
        try enter(at: openOffset)
        defer { leave() }
        var members: [ExpressionObjectMember] = []
        if isAt(.closeBrace) {
            advance()
            return .object(members, offset: openOffset)
        }
        repeat {
            let (key, keyOffset) = try parseObjectKey()
            members.append(ExpressionObjectMember(key: key, keyOffset: keyOffset, value: try parseExpression()))
        } while skipComma()
        try expectClosing(.closeBrace, openedAt: openOffset, orComma: true)
        return .object(members, offset: openOffset)
    }

    /// A member's key (a string or a bare name, checked against the database's rules) and the
    /// ':' after it.
    @inline(never)
    private mutating func parseObjectKey() throws -> (key: String, offset: Int) {
        let token = peek
        let key: String
        switch token.kind {
        case .string(let text), .name(let text):
            key = text
        default:
            throw ExpressionError("expected a key (a string or a name), found \(token.foundDescription)", offset: token.offset)
        }
        if let problem = ExpressionParser.keyProblem(key) {
            throw ExpressionError("invalid key \(ExpressionValue.quoted(key)): \(problem)", offset: token.offset)
        }
        advance()
        guard isAt(.colon) else {
            throw ExpressionError("expected ':' after the key \(ExpressionValue.quoted(key)), found \(peek.foundDescription)", offset: peek.offset)
        }
        advance()
        return (key, token.offset)
    }

    /// Why the database would refuse `key`, or nil.
    private static func keyProblem(_ key: String) -> String? {
        if let problem = Path.problem(with: key) { return problem }
        let bytes = key.utf8.count
        if bytes > Path.maxBytes { return "keys must be at most \(Path.maxBytes) bytes (this one is \(bytes))" }
        return nil
    }

    // MARK: Errors, built out of line

    @inline(never)
    private func closingError(_ symbol: ExpressionSymbol, openedAt openOffset: Int, orComma: Bool) -> ExpressionError {
        let closer = "'\(symbol.rawValue)'"
        let what = orComma ? "',' or \(closer)" : closer
        let opener: String
        switch symbol {
        case .closeParen: opener = "("
        case .closeBracket: opener = "["
        default: opener = "{"
        }
        return ExpressionError("expected \(what) to close the '\(opener)' at column \(openOffset + 1), found \(peek.foundDescription)",
                               offset: peek.offset)
    }

    @inline(never)
    private func callWithoutParenthesesError(_ function: ExpressionFunction) -> ExpressionError {
        ExpressionError("expected '(' after '\(function.rawValue)', found \(peek.foundDescription)", offset: peek.offset)
    }

    @inline(never)
    private static func argumentCountError(_ function: ExpressionFunction, found count: Int, at offset: Int) -> ExpressionError {
        let takes: String
        switch function.argumentCount {
        case 0: takes = "no arguments"
        case 1: takes = "1 argument"
        default: takes = "\(function.argumentCount) arguments"
        }
        return ExpressionError("\(function.rawValue)() takes \(takes), found \(count)", offset: offset)
    }

    @inline(never)
    private static func tooDeepError(at offset: Int) -> ExpressionError {
        ExpressionError("the expression is nested too deeply (the limit is \(maxDepth) levels)", offset: offset)
    }

    /// For states the parser never reaches; an error rather than a trap all the same.
    @inline(never)
    private func internalError() -> ExpressionError {
        ExpressionError("internal error: the expression could not be parsed", offset: peek.offset)
    }
}
