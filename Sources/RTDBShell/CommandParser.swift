import RTDBClient
import RTDBData
import RTDBProtocol

/// Turns tokens into a `Command`: finds the command, separates flags from arguments, resolves
/// paths against the current location and parses values. Errors point at the offending token
/// and suggest the nearest command or flag.
public enum CommandParser {
    public static func parse(_ line: String, cwd: Path) throws -> ParsedLine? {
        let tokens = try Tokenizer.tokenize(line)
        return try parse(tokens: tokens, cwd: cwd)
    }

    public static func parse(tokens: [Token], cwd: Path) throws -> ParsedLine? {
        guard let first = tokens.first else { return nil }
        guard let spec = CommandSpec.find(first.text) else {
            let names = CommandSpec.all.flatMap { [$0.name] + $0.aliases }
            var message = "unknown command '\(first.text)'"
            if let near = Suggest.nearest(first.text, in: names) { message += "; did you mean '\(near)'?" }
            message += " (type 'help' for the list)"
            throw ShellError(message, column: first.column)
        }
        var args = Arguments(spec: spec, command: first)
        try args.split(Array(tokens.dropFirst()))
        let command = try spec.build(args, cwd)
        return ParsedLine(command: command, format: try outputFormat(args), noColor: args.has("--no-color"))
    }

    /// `--format FORMAT`, or `--json` (the same as `--format json`).
    static func outputFormat(_ args: Arguments) throws -> OutputFormat? {
        guard let token = args.value("--format") else { return args.has("--json") ? .json : nil }
        guard let format = OutputFormat(rawValue: token.unquoted) else {
            var message = "unknown format '\(token.text.prefix(40))': the formats are \(OutputFormat.names.joined(separator: ", "))"
            if let near = Suggest.nearest(token.unquoted, in: OutputFormat.names) { message += "; did you mean '\(near)'?" }
            throw ShellError(message, column: token.column)
        }
        if format != .json, args.has("--json") {
            throw ShellError("--json is --format json: give one format", column: args.flagColumn("--json"))
        }
        return format
    }

    // One builder per command, named in its `CommandSpec` entry: it checks the arguments and
    // flags `Arguments` separated and makes the `Command`.

    static func get(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1)
        let path = try args.path(0, cwd: cwd, writing: false) ?? cwd
        let query = QuerySpec(path: path, params: try QueryFlags.params(from: args))
        if args.has("--explain") {
            try refuse(["--shallow", "--export"], with: "--explain", in: args)
            return .explain(query)
        }
        return .get(query, shallow: args.has("--shallow"), export: args.has("--export"))
    }

    static func set(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(2...2, usage: "set needs a path and a value")
        let path = try args.requiredPath(0, cwd: cwd, writing: true)
        var value = try ValueParser.parse(args.positional[1], base: path)
        if let p = args.value("--priority") {
            let priority = try ValueParser.parsePriority(p)
            if value.isEmpty, priority != nil {
                throw ShellError("a priority needs a value: null removes the value", column: p.column)
            }
            value = value.withPriority(priority)
        }
        return .set(path, value)
    }

    static func update(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(2...2, usage: "update needs a path and a JSON object")
        let path = try args.requiredPath(0, cwd: cwd, writing: true)
        return .update(path, try ValueParser.parseUpdate(args.positional[1], base: path))
    }

    static func push(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(1...2, usage: "push needs a path")
        let path = try args.requiredPath(0, cwd: cwd, writing: true)
        // The key is 20 characters plus a separator.
        if path.utf8Length + 21 > Path.maxBytes || path.count + 1 > Path.maxDepth {
            throw ShellError(DataError.pathTooLong(path: path.description + "/<push id>", bytes: path.utf8Length + 21).description,
                             column: args.positional[0].column)
        }
        let value = try args.positional.count > 1 ? ValueParser.parse(args.positional[1], base: path.child("-AAAAAAAAAAAAAAAAAAA")) : nil
        return .push(path, value)
    }

    static func remove(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(1...1, usage: "remove needs a path (use 'remove / --force' for everything)")
        return .remove(try args.requiredPath(0, cwd: cwd, writing: true), force: args.has("--force"))
    }

    static func copy(_ args: Arguments, cwd: Path, move: Bool) throws -> Command {
        let verb = move ? "mv" : "cp"
        try args.expect(2...2, usage: "\(verb) needs a source and a destination path")
        let source = try args.requiredPath(0, cwd: cwd, writing: true)
        let destination = try args.requiredPath(1, cwd: cwd, writing: true)
        let at = args.positional[1].column
        if source == destination { throw ShellError("\(source) is the source and the destination: nothing to \(move ? "move" : "copy")", column: at) }
        if source.contains(destination) {
            throw ShellError("\(destination) is inside \(source): a path cannot be \(move ? "moved" : "copied") into itself", column: at)
        }
        if move && destination.contains(source) {
            throw ShellError("\(destination) holds \(source): moving it there would replace what it is moved out of (cp --force copies it)", column: at)
        }
        if destination.isRoot && !args.has("--merge") {
            throw ShellError("copying onto / would replace the whole database: --merge writes \(source)'s children into it", column: at)
        }
        return .copy(CopyRequest(source: source, destination: destination, move: move, merge: args.has("--merge"), force: args.has("--force")))
    }

    static func priority(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(2...2, usage: "priority needs a path and a priority")
        let path = try args.requiredPath(0, cwd: cwd, writing: true)
        return .priority(path, try ValueParser.parsePriority(args.positional[1]))
    }

    static func ls(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1)
        return .ls(try args.path(0, cwd: cwd, writing: false) ?? cwd, long: args.has("--long"))
    }

    static func edit(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(1...1, usage: "edit needs a path")
        return .edit(try args.requiredPath(0, cwd: cwd, writing: true))
    }

    static func tree(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1)
        return .tree(try args.path(0, cwd: cwd, writing: false) ?? cwd, depth: try depth(args, default: 2))
    }

    static func du(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1)
        return .du(try args.path(0, cwd: cwd, writing: false) ?? cwd, depth: try depth(args, default: 1))
    }

    static func importFile(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(2...2, usage: "import needs a path and a file (- for standard input)")
        let path = try args.requiredPath(0, cwd: cwd, writing: true)
        var chunk: Int?
        if let token = args.value("--chunk-size") {
            guard let bytes = byteCount(token.text), bytes >= 64 << 10, bytes <= ImportSplitter.largestWrite else {
                throw ShellError("--chunk-size needs a size from 64k to 15M, as in --chunk-size 4M", column: token.column)
            }
            chunk = bytes
        }
        return .importFile(path, file: args.positional[1].unquoted, merge: args.has("--merge"), chunk: chunk, quiet: args.has("--quiet"))
    }

    static func export(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...2)
        let path = try args.path(0, cwd: cwd, writing: false) ?? cwd
        let file = args.positional.count > 1 ? args.positional[1].unquoted : nil
        return .export(path, file: file == "-" ? nil : file, priorities: args.has("--priorities"), quiet: args.has("--quiet"))
    }

    /// "65536", "64k", "4M": bytes, with k and M as 1024 and 1024².
    static func byteCount(_ text: String) -> Int? {
        var digits = Substring(text)
        var unit = 1
        if let last = text.last, last == "k" || last == "K" || last == "m" || last == "M" {
            unit = (last == "k" || last == "K") ? 1 << 10 : 1 << 20
            digits = digits.dropLast()
        }
        guard let n = Int(digits), n >= 0, n <= Int.max / unit else { return nil }
        return n * unit
    }

    /// `--depth N`: how many levels below the path, 1 to the deepest a path can go.
    private static func depth(_ args: Arguments, default value: Int) throws -> Int {
        guard let token = args.value("--depth") else { return value }
        guard let n = Int(token.text), n >= 1, n <= Path.maxDepth else {
            throw ShellError("--depth needs a number of levels from 1 to \(Path.maxDepth), as in --depth 2", column: token.column)
        }
        return n
    }

    static func query(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(1...1, usage: "query needs a path")
        let path = try args.requiredPath(0, cwd: cwd, writing: false)
        let params = try QueryFlags.params(from: args)
        if args.has("--explain") {
            try refuse(["--watch", "--events", "--bg"], with: "--explain", in: args)
            return .explain(QuerySpec(path: path, params: params))
        }
        if args.has("--bg") && !args.has("--watch") {
            throw ShellError("--bg goes with --watch", column: args.value("--bg")?.column)
        }
        return .query(QuerySpec(path: path, params: params), watch: args.has("--watch"),
                      events: try QueryFlags.events(from: args.value("--events")), background: args.has("--bg"))
    }

    /// Refuses each of `flags` given with `flag`, at its column.
    private static func refuse(_ flags: [String], with flag: String, in args: Arguments) throws {
        for other in flags where args.has(other) {
            throw ShellError("\(other) does not go with \(flag)", column: args.flagColumn(other))
        }
    }

    /// Commands a repeat cannot run: they do not end by themselves, or they ask for input.
    static let unrepeatable: Set<String> = ["repeat", "watch", "monitor", "profile", "edit", "exit"]

    static func repeatCommand(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1)
        var count: Int?
        if let word = args.positional.first {
            guard let n = Int(word.text), n >= 1 else {
                throw ShellError("COUNT is how many runs, a whole number from 1 on, as in repeat 3 get /x", column: word.column)
            }
            count = n
        }
        var every = RepeatRequest.defaultEvery
        if let word = args.value("--every") {
            guard let seconds = DurationWord.seconds(word.text) else {
                throw ShellError("'\(word.text.prefix(40))' is not a duration: use 500ms, 2s, 1.5m or 1h (at most a day)", column: word.column)
            }
            every = seconds
        }
        guard let first = args.rest.first else {
            throw ShellError("repeat needs a command to run: usage: \(args.spec.usage)", column: args.command.column + args.command.text.count)
        }
        var parsed: ParsedLine
        do {
            guard let line = try parse(tokens: args.rest, cwd: cwd) else { throw ShellError("repeat needs a command to run", column: first.column) }
            parsed = line
        } catch var error as ShellError where error.message.hasPrefix("unknown flag '--every'") {
            error.message += "; repeat's own --every comes before the command"
            throw error
        }
        var name = CommandSpec.find(first.text)?.name ?? first.text
        if case .query(_, true, _, _) = parsed.command { name = "query --watch" }
        if unrepeatable.contains(name) || name == "query --watch" {
            throw ShellError("\(name) cannot be repeated: it does not end by itself or asks for input", column: first.column)
        }
        // Output flags given to repeat are the command's.
        parsed.format = try outputFormat(args) ?? parsed.format
        parsed.noColor = parsed.noColor || args.has("--no-color")
        let text = args.rest.map(\.text).joined(separator: " ")
        return .repeating(RepeatRequest(count: count, every: every, command: parsed, text: text))
    }

    static func watch(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1)
        let path = try args.path(0, cwd: cwd, writing: false) ?? cwd
        return .watch(QuerySpec(path: path, params: try QueryFlags.params(from: args)),
                      events: try QueryFlags.events(from: args.value("--events")), background: args.has("--bg"))
    }

    static func monitor(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1, usage: "monitor takes at most a path")
        return .monitor(try args.path(0, cwd: cwd, writing: false) ?? cwd, background: args.has("--bg"))
    }

    static func profile(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...0, usage: "profile takes flags only")
        var request = ProfileRequest()
        if let word = args.value("--duration") {
            guard let seconds = DurationWord.seconds(word.unquoted), seconds > 0 else {
                throw ShellError("'\(word.text.prefix(40))' is not a duration: use 500ms, 30s, 1.5m or 1h (at most a day)", column: word.column)
            }
            request.duration = seconds
        }
        request.raw = args.has("--raw")
        request.output = args.value("--output")?.unquoted
        request.input = args.value("--input")?.unquoted
        request.collapse = !args.has("--no-collapse")
        if request.input != nil, let flag = ["--duration", "--raw"].first(where: args.has) {
            throw ShellError("\(flag) is for a capture, not for a report of --input", column: args.flagColumn(flag))
        }
        return .profile(request)
    }

    static func watches(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...0)
        return .watches
    }

    static func unwatch(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(1...1, usage: "unwatch needs a watch id or all")
        let target = args.positional[0]
        if target.text == "all" { return .unwatch(nil) }
        guard let id = Int(target.text), id > 0 else {
            throw ShellError("'\(target.text)' is not a watch id: use the number shown by 'watches', or all", column: target.column)
        }
        return .unwatch(id)
    }

    static func tx(_ args: Arguments, cwd: Path) throws -> Command {
        let verbose = args.has("--verbose")
        let shorthands = ["--increment", "--append", "--set-if-absent"].filter { args.has($0) }
        if shorthands.count > 1 {
            let second = args.ordered.first { $0.name == shorthands[1] }?.flag
            throw ShellError("\(shorthands[0]) and \(shorthands[1]) do not go together: choose one", column: second?.column)
        }
        if let flag = shorthands.first, let value = args.value(flag) {
            try args.expect(1...1, usage: "tx with \(flag) takes a path and no expression")
            let path = try args.requiredPath(0, cwd: cwd, writing: true)
            switch flag {
            case "--increment":
                guard let delta = Double(value.unquoted), delta.isFinite, !value.unquoted.isEmpty else {
                    throw ShellError("--increment needs a number, as in --increment 1", column: value.column)
                }
                return .tx(path, .increment(delta), verbose: verbose)
            case "--append":
                return .tx(path, .append(try ValueParser.parse(value, base: path.child("0"))), verbose: verbose)
            default:
                return .tx(path, .setIfAbsent(try ValueParser.parse(value, base: path)), verbose: verbose)
            }
        }
        try args.expect(2...Int.max, usage: "tx needs a path and an expression (or --increment N, --append VALUE, --set-if-absent VALUE)")
        let path = try args.requiredPath(0, cwd: cwd, writing: true)
        let (source, column) = expressionSource(Array(args.positional.dropFirst()))
        do {
            return .tx(path, .expression(try TransactionExpression.parse(source), column: column), verbose: verbose)
        } catch let error as ExpressionError {
            throw ShellError(error.message, column: column + error.offset)
        }
    }

    /// EXPR as typed: one quoted word without its quotes, or several words (`tx /n $ + 1`)
    /// each at its place on the line, so error columns point where the user typed.
    private static func expressionSource(_ tokens: [Token]) -> (String, Int) {
        guard let first = tokens.first else { return ("", 0) }
        if tokens.count == 1 {
            switch first.kind {
            case .singleQuoted: return (first.unquoted, first.column + 1)
            case .doubleQuoted, .word, .json: return (first.text, first.column)
            }
        }
        var source = ""
        for token in tokens {
            let gap = token.column - first.column - source.count
            source += String(repeating: " ", count: max(gap, source.isEmpty ? 0 : 1)) + token.text
        }
        return (source, first.column)
    }

    static func ondisconnect(_ args: Arguments, cwd: Path) throws -> Command {
        if args.positional.isEmpty { return .onDisconnect(nil) }
        try args.expect(2...3, usage: "ondisconnect needs a path and set VALUE, update OBJECT, remove or cancel")
        let path = try args.requiredPath(0, cwd: cwd, writing: true)
        let verb = args.positional[1]
        let needsValue = verb.text == "set" || verb.text == "update"
        if needsValue && args.positional.count < 3 {
            throw ShellError("ondisconnect \(verb.text) needs a value: usage: \(args.spec.usage)", column: verb.column + verb.text.count)
        }
        if !needsValue && args.positional.count > 2 {
            let extra = args.positional[2]
            throw ShellError("unexpected argument '\(extra.text.prefix(40))': \(verb.text) takes no value", column: extra.column)
        }
        switch verb.text {
        case "set": return .onDisconnect(.set(path, try ValueParser.parse(args.positional[2], base: path)))
        case "update": return .onDisconnect(.update(path, try ValueParser.parseUpdate(args.positional[2], base: path)))
        case "remove", "rm": return .onDisconnect(.set(path, .empty))
        case "cancel": return .onDisconnect(.cancel(path))
        default:
            throw ShellError("'\(verb.text)' is not an onDisconnect action: use set, update, remove or cancel", column: verb.column)
        }
    }

    static func keepsynced(_ args: Arguments, cwd: Path) throws -> Command {
        if args.positional.isEmpty { return .keepSynced(nil, on: true) }
        try args.expect(2...2, usage: "keepsynced needs a path and on or off")
        let path = try args.requiredPath(0, cwd: cwd, writing: true)
        return .keepSynced(path, on: try onOff(args.positional[1]))
    }

    static func auth(_ args: Arguments, cwd: Path) throws -> Command {
        if let uid = args.value("--uid") {
            try args.expect(0...0, usage: "auth takes a token file or --uid, not both")
            return .auth(.uid(try userID(uid, flag: "--uid"), claims: try claims(args)))
        }
        if let claims = args.value("--claims") { throw ShellError("--claims goes with --uid", column: claims.column) }
        try args.expect(1...1, usage: "auth needs a file holding a token, or --uid UID")
        return .auth(.file(args.positional[0].unquoted))
    }

    static func rules(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(1...4, usage: "rules get, rules set FILE, rules check read|write|update PATH [VALUE], or rules coverage")
        let word = args.positional[0]
        if word.text != "check", let flag = ["--as", "--claims", "--rules"].first(where: args.has) {
            throw ShellError("\(flag) goes with rules check", column: args.flagColumn(flag))
        }
        switch word.text {
        case "get":
            try args.expect(1...1, usage: "rules get takes nothing more")
            return .rules(file: nil)
        case "set":
            try args.expect(2...2, usage: "rules set needs the file of the new rules")
            return .rules(file: args.positional[1].unquoted)
        case "check":
            return .rulesCheck(try rulesCheck(args, cwd: cwd))
        case "coverage":
            try args.expect(1...1, usage: "rules coverage takes nothing more")
            return .rulesCoverage
        default:
            throw ShellError("rules get, rules set FILE, rules check read|write|update PATH [VALUE], or rules coverage", column: word.column)
        }
    }

    /// `rules check read PATH`, `rules check write PATH VALUE`, `rules check update PATH OBJECT`,
    /// as whom (`--as`, `--claims`), under which rules (`--rules`).
    private static func rulesCheck(_ args: Arguments, cwd: Path) throws -> RulesCheck {
        try args.expect(3...4, usage: "rules check needs read, write or update, then a path")
        let kind = args.positional[1]
        let operation: RulesCheck.Operation
        let path: Path
        switch kind.text {
        case "read":
            try args.expect(3...3, usage: "rules check read takes a path only")
            path = try args.requiredPath(2, cwd: cwd, writing: false)
            operation = .read
        case "write":
            try args.expect(4...4, usage: "rules check write needs a path and a value (null for a removal)")
            path = try args.requiredPath(2, cwd: cwd, writing: true)
            operation = .write(try ValueParser.parse(args.positional[3], base: path))
        case "update":
            try args.expect(4...4, usage: "rules check update needs a path and a JSON object of paths and values")
            path = try args.requiredPath(2, cwd: cwd, writing: true)
            operation = .update(try ValueParser.parseUpdate(args.positional[3], base: path))
        default:
            throw ShellError("rules check asks of a read, a write or an update, not '\(kind.text.prefix(40))'", column: kind.column)
        }
        var check = RulesCheck(operation: operation, path: path)
        if let uid = args.value("--as") {
            check.uid = try userID(uid, flag: "--as")
            check.claims = try claims(args)
        } else if let claims = args.value("--claims") {
            throw ShellError("--claims goes with --as", column: claims.column)
        }
        check.rulesFile = args.value("--rules")?.unquoted
        return check
    }

    /// A user id given with `flag`: 1 to 128 characters, as Firebase Auth's.
    private static func userID(_ token: Token, flag: String) throws -> String {
        guard !token.unquoted.isEmpty, token.unquoted.count <= 128 else { throw ShellError("\(flag) needs a user id of 1 to 128 characters", column: token.column) }
        return token.unquoted
    }

    /// The object of `--claims`, empty when there is none.
    private static func claims(_ args: Arguments) throws -> JSONValue {
        guard let text = args.value("--claims") else { return .object([]) }
        guard let parsed = try? JSONValue.parse(text.unquoted), parsed.members != nil else {
            throw ShellError("--claims needs a JSON object, as in --claims '{\"admin\": true}'", column: text.column)
        }
        return parsed
    }

    static func cd(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1)
        return .cd(try args.path(0, cwd: cwd, writing: false) ?? .root)
    }

    static func help(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1)
        if let topic = args.positional.first {
            do {
                return .help(try Help.topic(topic.text).name)
            } catch var error as ShellError {
                error.column = topic.column
                throw error
            }
        }
        return .help(nil)
    }

    static func snapshot(_ args: Arguments, cwd: Path) throws -> Command {
        let usage = "snapshot save NAME, snapshot restore NAME, snapshot list, or snapshot rm NAME"
        try args.expect(1...2, usage: usage)
        let word = args.positional[0]
        if word.text == "list" {
            try args.expect(1...1, usage: "snapshot list takes nothing more")
            return .snapshot(.list)
        }
        guard ["save", "restore", "rm"].contains(word.text) else { throw ShellError(usage, column: word.column) }
        try args.expect(2...2, usage: "snapshot \(word.text) needs the snapshot's name, as in snapshot \(word.text) seed")
        let nameWord = args.positional[1]
        let name = nameWord.unquoted
        guard SnapshotInfo.isValid(name) else { throw ShellError(SnapshotInfo.nameRule(name), column: nameWord.column) }
        switch word.text {
        case "save": return .snapshot(.save(name))
        case "restore": return .snapshot(.restore(name))
        default: return .snapshot(.remove(name))
        }
    }

    static func use(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(1...1, usage: "use needs the namespace to move to, as in use demo")
        let word = args.positional[0]
        let name = word.unquoted
        guard NamespaceName.isValid(name) else {
            throw ShellError("'\(name.prefix(70))' is not a namespace name: letters, digits, \"-\" and \"_\", at most 64", column: word.column)
        }
        return .use(name)
    }

    static func sleep(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(1...1, usage: "sleep needs a duration, as in sleep 500ms")
        let word = args.positional[0]
        guard let seconds = DurationWord.seconds(word.text) else {
            throw ShellError("'\(word.text.prefix(40))' is not a duration: use 500ms, 2s, 1.5m or 1h (at most a day)", column: word.column)
        }
        return .sleep(seconds: seconds)
    }

    static func purgeWrites(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...0)
        return .purgeWrites(force: args.has("--force"))
    }

    static func cache(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1, usage: "cache takes nothing, or clear")
        guard let word = args.positional.first else { return .cache(clear: false) }
        guard word.text == "clear" else { throw ShellError("expected clear, found '\(word.text.prefix(40))'", column: word.column) }
        return .cache(clear: true)
    }

    static func timing(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1)
        return .timing(try args.positional.first.map(onOff))
    }

    static func pager(_ args: Arguments, cwd: Path) throws -> Command {
        try args.expect(0...1)
        return .pager(try args.positional.first.map(onOff))
    }

    /// `on` or `off`.
    private static func onOff(_ token: Token) throws -> Bool {
        switch token.text {
        case "on": return true
        case "off": return false
        default: throw ShellError("expected on or off, found '\(token.text.prefix(40))'", column: token.column)
        }
    }

    /// The builder of a command that takes no arguments.
    static func bare(_ command: Command) -> @Sendable (Arguments, Path) throws -> Command {
        { args, _ in
            try args.expect(0...0)
            return command
        }
    }

    /// Resolves a path word against `cwd`: absolute, or relative with `.` and `..`.
    public static func resolve(_ text: String, cwd: Path) -> Path {
        var keys = text.hasPrefix("/") ? [] : cwd.keys
        for part in Path.segments(text) {
            switch part {
            case ".": continue
            case "..": if !keys.isEmpty { keys.removeLast() }
            default: keys.append(String(part))
            }
        }
        return Path(keys: keys)
    }
}

/// A command's tokens split into flags and positional arguments.
struct Arguments {
    let spec: CommandSpec
    let command: Token
    var positional: [Token] = []
    var flags: [String: Token?] = [:]
    /// Flags in the order given, with their value and optional key (query flags apply in order).
    var ordered: [(name: String, flag: Token, value: Token?, key: Token?)] = []
    /// For a command that wraps another (`repeat`): that command's tokens.
    var rest: [Token] = []

    init(spec: CommandSpec, command: Token) {
        self.spec = spec
        self.command = command
    }

    static func isFlag(_ token: Token) -> Bool {
        guard token.kind == .word else { return false }
        let t = token.text
        if t.hasPrefix("--") { return t.count > 2 }
        // "-5" and "-1.5" are numbers, not flags.
        if t.hasPrefix("-"), t.count == 2, let c = t.unicodeScalars.last { return c.properties.isAlphabetic }
        return false
    }

    mutating func split(_ tokens: [Token]) throws {
        var i = 0
        while i < tokens.count {
            let token = tokens[i]
            // A wrapped command starts at the first word that is neither a number (however
            // large: the wrapper says why it is not one it takes) nor a flag.
            if spec.wrapsCommand && !Arguments.isFlag(token) && Int(token.text) == nil
                && !(token.kind == .word && !token.text.isEmpty && token.text.utf8.allSatisfy { (0x30...0x39).contains($0) }) {
                rest = Array(tokens[i...])
                return
            }
            i += 1
            if token.kind == .word && token.text == "--" {
                positional.append(contentsOf: tokens[i...])
                break
            }
            guard Arguments.isFlag(token) else {
                positional.append(token)
                continue
            }
            var name = token.text
            var inlineValue: Token?
            if let eq = name.firstIndex(of: "=") {
                let valueText = String(name[name.index(after: eq)...])
                inlineValue = Token(text: valueText, column: token.column + name.distance(from: name.startIndex, to: eq) + 1, kind: .word)
                name = String(name[..<eq])
            }
            guard let flag = spec.allFlags.first(where: { $0.name == name || $0.short == name }) else {
                var message = "unknown flag '\(name)' for \(spec.name)"
                if let near = Suggest.nearest(name, in: spec.allFlags.map(\.name)) { message += "; did you mean '\(near)'?" }
                throw ShellError(message + " (see 'help \(spec.name)')", column: token.column)
            }
            let isQueryFlag = CommandSpec.queryFlags.contains { $0.name == flag.name }
            if flags[flag.name] != nil && !isQueryFlag {
                throw ShellError("\(flag.name) is given twice", column: token.column)
            }
            if let valueName = flag.value {
                var value: Token
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard i < tokens.count, !Arguments.isFlag(tokens[i]) || !flag.optionalKey else {
                        throw ShellError("\(flag.name) needs a value (\(valueName))", column: token.column)
                    }
                    guard i < tokens.count else { throw ShellError("\(flag.name) needs a value (\(valueName))", column: token.column) }
                    value = tokens[i]
                    i += 1
                }
                var key: Token?
                if flag.optionalKey, i < tokens.count, !Arguments.isFlag(tokens[i]) {
                    key = tokens[i]
                    i += 1
                }
                flags[flag.name] = value
                ordered.append((flag.name, token, value, key))
            } else {
                if inlineValue != nil { throw ShellError("\(flag.name) takes no value", column: token.column) }
                flags[flag.name] = .some(nil)
                ordered.append((flag.name, token, nil, nil))
            }
        }
    }

    func has(_ flag: String) -> Bool { flags[flag] != nil }
    /// Where `flag` was given, for an error about it.
    func flagColumn(_ flag: String) -> Int? { ordered.first { $0.name == flag }?.flag.column }
    func value(_ flag: String) -> Token? { flags[flag] ?? nil }

    func expect(_ range: ClosedRange<Int>, usage: String? = nil) throws {
        if positional.count < range.lowerBound {
            let end = command.column + command.text.count
            throw ShellError("\(usage ?? "missing argument"): usage: \(spec.usage)", column: end)
        }
        if positional.count > range.upperBound {
            let extra = positional[range.upperBound]
            var message = "unexpected argument '\(extra.text.prefix(40))': usage: \(spec.usage)"
            if spec.name == "set" || spec.name == "push" { message += " (quote a value with spaces: \"two words\")" }
            throw ShellError(message, column: extra.column)
        }
    }

    /// A path argument that `expect` already made sure is there.
    func requiredPath(_ index: Int, cwd: Path, writing: Bool) throws -> Path {
        guard let path = try path(index, cwd: cwd, writing: writing) else {
            throw ShellError("missing argument: usage: \(spec.usage)", column: command.column + command.text.count)
        }
        return path
    }

    func path(_ index: Int, cwd: Path, writing: Bool) throws -> Path? {
        guard index < positional.count else { return nil }
        let token = positional[index]
        if token.kind == .json { throw ShellError("expected a path, found a JSON value", column: token.column) }
        let path = CommandParser.resolve(token.unquoted, cwd: cwd)
        do {
            try path.validate(allowInfo: !writing)
        } catch {
            throw ShellError("\(error)", column: token.column)
        }
        return path
    }
}

/// "Did you mean …?" by edit distance.
enum Suggest {
    static func nearest(_ word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word.lowercased(), $0)) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(1, min(word.count, best.0.count) / 2) ? best.0 : nil
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
