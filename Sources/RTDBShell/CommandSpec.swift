import RTDBData

/// What a command accepts and how it is explained: the single source for the parser,
/// `help`, in-shell completion, the bash/zsh/fish completion scripts and the manual's
/// COMMANDS section.
public struct CommandSpec: Sendable {
    public struct Flag: Sendable {
        public var name: String        // "--priority"
        public var short: String?      // "-f"
        public var value: String?      // "P" when the flag takes a value
        public var help: String
        /// A second, optional value (the tie-breaking key of a query bound).
        public var optionalKey = false
        /// The values the flag's value is chosen from, when it is a fixed list (completion).
        public var choices: [String] = []
    }

    /// What the first argument is, for completion.
    public enum Argument: Sendable {
        case none
        /// A database path: completed key by key from the database.
        case path
        /// Database paths, every argument (`cp SRC DST`).
        case paths
        /// A command name (`help`).
        case command
    }

    /// `--explain` of `get` and `query`, and what it prints.
    static let explainFlag = Flag(name: "--explain", value: nil, help: "how the database answers it: the index, the children read, the time")
    static let explainDetails = "With --explain, the database answers the read and says how instead of printing the data: the index that ordered the children (kept from an earlier read, stored with the data, built for this read, or none for key order and for a query with no limit or range), how many children it read (to build the index and to answer), the time it took on the server, and, for a query ordered by a child or by value that the rules give no .indexOn, the exact .indexOn to add and the rules location it goes at (a $wildcard where the rules reach the level through one). The embedded database and rtdb serve explain their reads (rtdb serve answers a REST GET with explain=true), and the rules decide as for the read itself; hosted Firebase and its emulator do not explain."

    static let copyFlags = [
        Flag(name: "--merge", value: nil, help: "write SRC's children into DST, which keeps its others"),
        Flag(name: "--force", short: "-f", value: nil, help: "replace what is at DST (with --merge, its children of the same names)"),
    ]

    static func copyDetails(move: Bool) -> String {
        let verb = move ? "Moves" : "Copies"
        let removal = move ? " and removes SRC" : ""
        return "\(verb) the value at SRC (priorities kept) to DST\(removal) in one atomic write, made only if neither changed since they were read: if another client writes either meanwhile, nothing is written and it says so (run it again to \(move ? "move" : "copy") what is there now). DST must be empty unless --force; with --merge, SRC's children are written into DST, which keeps its other children (those of the same names need --force). A path cannot be \(move ? "moved" : "copied") into itself\(move ? " or to a path above it" : ""). The rules decide as for an update that writes DST\(move ? " and SRC" : ""), and both must be readable. Offline, it is queued as any write, and checked when the server gets it.\n\nrtdb's servers (the embedded database, rtdb serve) check the write's guards themselves; hosted Firebase and its emulator have no such write, so there it runs as a transaction at the lowest path above both SRC and DST, which reads all of it and needs the rules to let you write it (not at /: a transaction there would read the whole database)."
    }

    /// The query flags shared by `query`, `watch` and `get`.
    public static let queryFlags: [Flag] = [
        Flag(name: "--orderByChild", value: "KEY", help: "order by the value of this child (a path like a/b)"),
        Flag(name: "--orderByKey", value: nil, help: "order by key"),
        Flag(name: "--orderByValue", value: nil, help: "order by value"),
        Flag(name: "--orderByPriority", value: nil, help: "order by priority (the default order)"),
        Flag(name: "--limitToFirst", value: "N", help: "only the first N children"),
        Flag(name: "--limitToLast", value: "N", help: "only the last N children"),
        Flag(name: "--startAt", value: "V [KEY]", help: "children from V on (KEY breaks ties)", optionalKey: true),
        Flag(name: "--startAfter", value: "V [KEY]", help: "children after V", optionalKey: true),
        Flag(name: "--endAt", value: "V [KEY]", help: "children up to V", optionalKey: true),
        Flag(name: "--endBefore", value: "V [KEY]", help: "children before V", optionalKey: true),
        Flag(name: "--equalTo", value: "V [KEY]", help: "children equal to V", optionalKey: true),
    ]

    static let eventsFlag = Flag(name: "--events", value: "LIST",
                                 help: "which events: value, child_added, child_changed, child_removed, child_moved (comma-separated; default all)",
                                 choices: ["value", "child_added", "child_changed", "child_removed", "child_moved"])

    public var name: String
    public var aliases: [String] = []
    public var argument: Argument = .none
    public var usage: String
    public var summary: String
    public var details: String
    public var flags: [Flag] = []
    public var examples: [String] = []
    /// Preformatted text after the details (a grammar, a table), kept line for line.
    public var reference: String? = nil
    /// The short form `help` lists, when the one made from `usage` is too long.
    public var shortUsage: String? = nil
    /// A command for a server's database only (credentials, rules): its examples assume one,
    /// signed in as the owner.
    public var needsServer = false
    /// A command that, on a server, takes the owner's credential (`snapshot`): its examples
    /// there are run signed in as the owner.
    public var ownerOnServer = false
    /// The words an argument is chosen from, by the arguments before it ("" for the first,
    /// "check" for the one after it), for completion.
    public var words: [String: [String]] = [:]
    /// The arguments after which a path comes ("check read"), for completion, when the path
    /// is not the first argument.
    public var pathAfter: Set<String> = []
    /// A command whose arguments end where another command begins (`repeat`): its own
    /// come first, the rest is that command's line (`Arguments.rest`).
    public var wrapsCommand = false
    /// Checks the command's arguments and flags and makes its `Command` (in `CommandParser`).
    let build: @Sendable (Arguments, Path) throws -> Command

    /// Flags every command accepts.
    public static let commonFlags: [Flag] = [
        Flag(name: "--json", value: nil, help: "compact JSON output, no colour (for programs)"),
        Flag(name: "--format", value: "FORMAT", help: "json, ndjson (a JSON value a line), table, csv or tsv",
             choices: OutputFormat.names),
        Flag(name: "--no-color", value: nil, help: "no colour, even on a terminal"),
    ]

    public var allFlags: [Flag] { flags + CommandSpec.commonFlags }

    /// `usage` without its flags (`[--…]` groups become one `[flags]`) and without the
    /// alternatives after the first (`tx PATH EXPR | …`): what `help` lists.
    public var synopsis: String {
        if let shortUsage { return shortUsage }
        let first = usage.components(separatedBy: " | \(name) ").first ?? usage
        var words: [String] = []
        var depth = 0
        var group = ""
        var dropped = false
        for character in first {
            if character == "[" { depth += 1 }
            if depth > 0 { group.append(character) }
            if character == "]" {
                depth -= 1
                if depth == 0 {
                    if group.hasPrefix("[--") { dropped = true } else { words.append(group) }
                    group = ""
                }
                continue
            }
            if depth == 0 {
                if character == " " { words.append("") } else if words.isEmpty { words.append(String(character)) } else { words[words.count - 1].append(character) }
            }
        }
        // A flag outside brackets (tx's shorthands) ends the synopsis too.
        if let flag = words.firstIndex(where: { $0.hasPrefix("--") }) { words = Array(words[..<flag]); dropped = true }
        if first != usage { dropped = true }
        var text = words.filter { !$0.isEmpty }.joined(separator: " ")
        if dropped && !text.contains("flags") { text += " [flags]" }
        return text
    }

    public static func find(_ word: String) -> CommandSpec? {
        all.first { $0.name == word || $0.aliases.contains(word) }
    }

    public static let all: [CommandSpec] = [
        CommandSpec(name: "get", argument: .path, usage: "get [PATH] [--shallow] [--export] [query flags] [--explain]",
                    summary: "print the value at a path",
                    details: "Reads the value from the database and prints it: pretty and coloured on a terminal, compact JSON otherwise or with --json. With query flags, the children the query selects, as one object whose keys come in query order; the text keeps that order, but a JSON parser or a map that sorts keys does not: use query for a list that keeps it.\n\n" + explainDetails,
                    flags: [Flag(name: "--shallow", value: nil, help: "children as true instead of their values"),
                            Flag(name: "--export", value: nil, help: "include priorities (.priority, .value)")] + queryFlags + [explainFlag],
                    examples: ["get /users/ada", "get users --shallow", "get / --json", "get /notes --orderByChild lastModified --limitToLast 4",
                               "get /notes --orderByChild lastModified --limitToLast 4 --explain"],
                    build: CommandParser.get),
        CommandSpec(name: "set", argument: .path, usage: "set PATH VALUE [--priority P]",
                    summary: "overwrite the value at a path",
                    details: "Replaces the value at PATH. VALUE is JSON; a bare word that is not JSON is a string; @FILE reads JSON from a file; now() is the server's timestamp and increment(N) adds N to the number there, as the whole value or anywhere inside it (not in files, which are plain JSON). null removes.",
                    flags: [Flag(name: "--priority", value: "P", help: "also set the priority (a number or a string)")],
                    examples: ["set /users/ada {\"name\": \"Ada\", \"born\": 1815}", "set /flags/beta true", "set /greeting hello",
                               "set /seen now()", "set /counters/visits increment(1)", "set /config @config.json"],
                    build: CommandParser.set),
        CommandSpec(name: "update", argument: .path, usage: "update PATH OBJECT",
                    summary: "atomic multi-path update",
                    details: "Writes each key of OBJECT below PATH in one atomic step; keys may be deeper paths (\"a/b\": 1) and null removes. Either all of it is written or none of it.",
                    examples: ["update /users/ada {\"name\": \"Ada King\", \"address/city\": \"London\"}", "update / {\"a/x\": 1, \"b\": null}"],
                    build: CommandParser.update),
        CommandSpec(name: "push", argument: .path, usage: "push PATH [VALUE]",
                    summary: "append under a new chronological key",
                    details: "Generates a push id (20 characters that sort by creation time), writes VALUE under it and prints the key. Without VALUE only the key is generated.",
                    examples: ["push /messages {\"text\": \"hi\", \"at\": now()}"],
                    build: CommandParser.push),
        CommandSpec(name: "remove", aliases: ["rm"], argument: .path, usage: "remove PATH [--force]",
                    summary: "delete the value at a path",
                    details: "Deletes PATH and everything below it. On a terminal it asks before removing the root or a subtree of more than 100 values; in a script removing the root needs --force.",
                    flags: [Flag(name: "--force", short: "-f", value: nil, help: "do not ask")],
                    examples: ["rm /sessions/old", "remove / --force"],
                    build: CommandParser.remove),
        CommandSpec(name: "cp", argument: .paths, usage: "cp SRC DST [--merge] [--force]",
                    summary: "copy a value to another path, atomically",
                    details: copyDetails(move: false),
                    flags: copyFlags,
                    examples: ["cp /users/ada /users/dan", "cp /tasks /backup/tasks --force", "cp /scores /tasks --merge --force"],
                    build: { try CommandParser.copy($0, cwd: $1, move: false) }),
        CommandSpec(name: "mv", aliases: ["rename"], argument: .paths, usage: "mv SRC DST [--merge] [--force]",
                    summary: "move a value to another path, atomically",
                    details: copyDetails(move: true),
                    flags: copyFlags,
                    examples: ["mv /notes/n1 /archive/n1", "rename /users/bob /users/robert", "mv /sessions /archive --merge"],
                    build: { try CommandParser.copy($0, cwd: $1, move: true) }),
        CommandSpec(name: "priority", argument: .path, usage: "priority PATH P",
                    summary: "set the priority of a value",
                    details: "Sets the priority (a number, a string, or null to clear it) used by the default ordering.",
                    examples: ["priority /tasks/a 10", "priority /tasks/b null"],
                    build: CommandParser.priority),
        CommandSpec(name: "ls", argument: .path, usage: "ls [PATH] [--long]",
                    summary: "list child keys",
                    details: "Lists the keys of PATH's children in key order. With --long, each key is followed by its number of children or its value.",
                    flags: [Flag(name: "--long", short: "-l", value: nil, help: "show child counts and values")],
                    examples: ["ls", "ls /users -l"],
                    build: CommandParser.ls),
        CommandSpec(name: "edit", argument: .path, usage: "edit PATH",
                    summary: "change a value in your editor",
                    details: "Opens the value at PATH as pretty JSON in $VISUAL or $EDITOR (vi if neither) and, once the editor exits, writes it back as a compare-and-set: only if the value is still the one opened, so a change made meanwhile is never overwritten blindly. Saved unchanged: nothing is written. Invalid JSON: the error with its line and column, and at a terminal an offer to reopen it. Changed meanwhile: what it was and is, and at a terminal an offer to reopen with the new value. now() and increment(N) may be used in the value.",
                    examples: [],
                    build: CommandParser.edit),
        CommandSpec(name: "tree", argument: .path, usage: "tree [PATH] [--depth N]",
                    summary: "the shape of a subtree",
                    details: "Draws the keys under PATH to N levels (2 by default): each object with its number of children, each value cut to the width of the terminal; past 20 children an object says how many more it has. With --json, the value to N levels, an object below them as {\".children\": N}.",
                    flags: [Flag(name: "--depth", value: "N", help: "levels to show (1 to 32; default 2)")],
                    examples: ["tree /users", "tree / --depth 1"],
                    build: CommandParser.tree),
        CommandSpec(name: "du", argument: .path, usage: "du [PATH] [--depth N]",
                    summary: "the size of each subtree, largest first",
                    details: "Prints the size of PATH in bytes of compact JSON (as get --json prints it), then of each subtree N levels below it (1 by default), largest first: where a database's bytes are, when a bill or a slow listener surprises. With --json, an array of {\"path\", \"bytes\"}, PATH first.",
                    flags: [Flag(name: "--depth", value: "N", help: "levels to break down (1 to 32; default 1)")],
                    examples: ["du", "du /users --depth 2"],
                    build: CommandParser.du),
        CommandSpec(name: "import", argument: .path, usage: "import PATH FILE [--merge] [--chunk-size SIZE] [--quiet]",
                    summary: "load a JSON file of any size",
                    details: "Writes the JSON in FILE (- for standard input, with rtdb -c) at PATH, replacing what is there; with --merge, as update does, it replaces only the children the file names. The whole file is checked first: an error in it (with its line and column) writes nothing. A file that fits in one write (8 MB, or --chunk-size) is one atomic write; a larger one is several writes (of about 2 MB, or --chunk-size), said before they start: if the import stops (Ctrl-C, a lost connection), PATH holds part of the file, and running the same import again finishes it. At a terminal a progress bar shows the bytes, the rate and the time left; otherwise a line every 5 seconds; --quiet shows neither, nor the summary. --json prints the summary as JSON.",
                    flags: [Flag(name: "--merge", value: nil, help: "replace only the children the file names, as update does"),
                            Flag(name: "--chunk-size", value: "SIZE", help: "the size of one write, 64k to 15M (default: 8M whole, else 2M parts)"),
                            Flag(name: "--quiet", short: "-q", value: nil, help: "no progress and no summary")],
                    examples: ["import /users users.json", "import /config settings.json --merge"],
                    build: CommandParser.importFile),
        CommandSpec(name: "export", argument: .path, usage: "export [PATH] [FILE] [--priorities] [--quiet]",
                    summary: "write a subtree as JSON, to a file or the output",
                    details: "Writes the value at PATH (the current path when omitted) as compact JSON to FILE, or to standard output when FILE is omitted or -. It is read in pages of children in key order and written as it comes, so its text is never whole in memory (each child is read in one piece, at most 256 MB), and a file appears only once complete (an export that fails leaves none). A large export reads its pages one after another: writes made meanwhile may or may not be in it. --priorities writes priorities as get --export does, so import restores them. Progress shows on standard error as for import.",
                    flags: [Flag(name: "--priorities", value: nil, help: "include priorities (.priority, .value), as get --export"),
                            Flag(name: "--quiet", short: "-q", value: nil, help: "no progress and no summary")],
                    examples: ["export /users users.json", "export / backup.json --priorities", "export /config"],
                    build: CommandParser.export),
        CommandSpec(name: "query", argument: .path, usage: "query PATH [--orderByChild K | --orderByKey | --orderByValue | --orderByPriority] [--limitToFirst N | --limitToLast N] [--startAt V [KEY]] [--startAfter V [KEY]] [--endAt V [KEY]] [--endBefore V [KEY]] [--equalTo V [KEY]] [--watch | --explain]",
                    summary: "ordered, filtered children of a path",
                    details: "Prints the children the query selects, in query order, as a JSON array of {\"key\": K, \"value\": V} (a JSON object would lose the order). With --watch, keeps the query open and prints its events as the window changes, like watch.\n\n" + explainDetails,
                    flags: queryFlags + [Flag(name: "--watch", value: nil, help: "keep watching the query's events"), eventsFlag, Flag(name: "--bg", value: nil, help: "with --watch: in the background"), explainFlag],
                    examples: ["query /notes --orderByChild lastModified --limitToLast 4", "query /users --orderByKey --startAt b --endBefore d",
                               "query /scores --orderByValue --equalTo 10", "query /notes --orderByChild lastModified --limitToLast 4 --watch",
                               "query /notes --orderByChild lastModified --limitToLast 4 --explain"],
                    build: CommandParser.query),
        CommandSpec(name: "watch", argument: .path, usage: "watch [PATH] [query flags] [--events LIST] [--bg]",
                    summary: "stream live events",
                    details: "Prints each event at PATH as it happens: the time, the type, the child's key, the previous sibling's key and the data. In the foreground it runs until Ctrl-C; with --bg it runs in the background while you keep typing (see watches, unwatch); in a script its events are lines of the script's output, in the order they happen, until unwatch or the end of the script (after its writes were acknowledged). Not on a terminal, or with --json, one JSON object per line, with the watch's number for a background watch.",
                    flags: queryFlags + [eventsFlag, Flag(name: "--bg", value: nil, help: "run in the background")],
                    examples: ["watch /notes", "watch /notes --events child_added,child_removed --bg", "watch /.info/connected"],
                    build: CommandParser.watch),
        CommandSpec(name: "monitor", argument: .path, usage: "monitor [PATH] [--bg]",
                    summary: "show every operation of every client as it runs",
                    details: "Prints each operation the database runs, from every client, one line each: the time, the client (its connection, or rest for a REST request; its address; the credential's uid, owner, or no-one), the operation as Firebase's profiler names it (concurrent-connect, concurrent-disconnect, realtime-read, realtime-write, realtime-update, realtime-transaction, listener-listen, listener-broadcast, listener-unlisten, rest-read, rest-write, rest-update), the path and query, the bytes in (a write's data) or out (a read's answer, a broadcast's pushes and how many clients got them), the time on the server in microseconds (a write's until durable), whether the rules allowed it, and unindexed for a query with a limit or a range ordered by a child the rules give no .indexOn. With PATH, only operations at or below it. In the foreground it runs until Ctrl-C; with --bg it runs in the background (see watches, unwatch). Not on a terminal, or with --json, one JSON object per line, in the shape of the profiler's stream.\n\nOn a server it takes the owner's credential and reads the server's /.settings/profile.json stream (what firebase database:profile reads); on an embedded database it shows every process on the folder. A monitor that cannot keep up loses operations rather than slow the database, and says how many.",
                    flags: [Flag(name: "--bg", value: nil, help: "run in the background")],
                    examples: ["monitor --bg", "set /users/ada/name \"Ada\"", "unwatch all"],
                    ownerOnServer: true,
                    build: CommandParser.monitor),
        CommandSpec(name: "profile", usage: "profile [--duration DURATION] [--raw] [-o FILE] [--input FILE] [--no-collapse]",
                    summary: "capture operations and report speed, bandwidth and unindexed queries",
                    details: "Captures the operations monitor shows until Ctrl-C (or for --duration: 500ms, 30s, 1.5m, 1h), saying at a terminal how many it has, then prints the report firebase database:profile prints: speed tables (read, write, broadcast, connect, disconnect, unlisten: by path, the count, the average time on the server and the operations the rules denied), bandwidth tables (bytes downloaded and uploaded by path) and the unindexed queries (path, index, count). Paths with 25 or more siblings in the capture are collapsed into $wildcard (--no-collapse keeps them). --raw prints the operations themselves instead, one JSON object a line, which --input FILE reads back later to report on them without a database (it also reads a saved stream of /.settings/profile.json). -o FILE writes to FILE instead (whole, or not at all); --json prints the report as firebase database:profile --json does. On a server it takes the owner's credential.",
                    flags: [Flag(name: "--duration", value: "DURATION", help: "capture this long, not until Ctrl-C"),
                            Flag(name: "--raw", value: nil, help: "the operations, one JSON object a line, not the report"),
                            Flag(name: "--output", short: "-o", value: "FILE", help: "write to FILE"),
                            Flag(name: "--input", value: "FILE", help: "report on a raw capture instead of capturing"),
                            Flag(name: "--no-collapse", value: nil, help: "keep paths with many siblings apart")],
                    examples: ["profile --duration 1s", "profile --duration 1s --raw -o capture.ndjson", "profile --input capture.ndjson"],
                    ownerOnServer: true,
                    build: CommandParser.profile),
        CommandSpec(name: "watches", usage: "watches", summary: "list background watches and monitors",
                    details: "Lists the background watches with their ids, paths, queries and event counts, and the background monitors (monitor --bg) with the operations they showed.",
                    build: CommandParser.watches),
        CommandSpec(name: "unwatch", usage: "unwatch ID|all", summary: "stop background watches and monitors",
                    details: "Stops the background watch or monitor with this id, or all of them. In a script it first waits for the writes before it to be acknowledged, so that the events they raise are printed.",
                    examples: ["unwatch 1", "unwatch all"],
                    build: CommandParser.unwatch),
        CommandSpec(name: "tx", argument: .path, usage: "tx PATH EXPR | tx PATH --increment N | --append VALUE | --set-if-absent VALUE [--verbose]",
                    summary: "atomic read-modify-write of a value",
                    details: "Runs a transaction: EXPR computes the new value from the current one, $, and the result is written only if nobody changed the value meanwhile; if someone did, EXPR runs again on the new value (up to 25 times). The result shows at once, and is replaced if it must be recomputed. EXPR reads nothing but the value; quote it ('$ + 1'). A null result removes the value; abort(\"reason\") gives up and writes nothing. tx prints the value committed, or why it was aborted (exit status 1); --verbose also prints every attempt. When the connection is lost, tx waits for it to return. After 'offline' it queues instead: in a script the 'online' that follows prints its outcome, at the terminal a notice does. Transactions are never kept across restarts. --increment N, --append VALUE (a list, keys 0, 1, ...) and --set-if-absent VALUE are shorthands.",
                    flags: [Flag(name: "--increment", value: "N", help: "add N to a number (nothing there counts as 0)"),
                            Flag(name: "--append", value: "VALUE", help: "add VALUE at the end of a list"),
                            Flag(name: "--set-if-absent", value: "VALUE", help: "write VALUE only if there is nothing there"),
                            Flag(name: "--verbose", short: "-v", value: nil, help: "print each attempt: the value it saw and what it computed")],
                    examples: ["tx /counters/visits '$ + 1'", "tx /counters/visits --increment 1", "tx /users/ada '$ + {\"seen\": now()}'",
                               "tx /stock/pens 'if ($ ?? 0) < 1 then abort(\"sold out\") else $ - 1'", "tx /log --append started",
                               "tx /owner --set-if-absent ada"],
                    reference: """
                    EXPR, loosest first (NUMBER and STRING are JSON; a name is letters, digits, _):
                      expr    = "if" expr "then" expr "else" expr | or
                      or      = and { "or" and }
                      and     = not { "and" not }
                      not     = "not" not | cmp
                      cmp     = coal [ ("==" | "!=" | "<" | "<=" | ">" | ">=") coal ]
                      coal    = sum { "??" sum }
                      sum     = prod { ("+" | "-") prod }
                      prod    = unary { ("*" | "/" | "%") unary }
                      unary   = "-" unary | postfix
                      postfix = primary { "." name | "[" expr "]" }
                      primary = "$" | "null" | "true" | "false" | NUMBER | STRING | "(" expr ")"
                              | "[" [ expr { "," expr } ] "]" | "{" [ key ":" expr { "," key ":" expr } ] "}"
                              | "len(" expr ")" | "keys(" expr ")" | "now()" | "abort(" expr ")"
                      key     = STRING | name   (a database key: no . # $ / [ ])

                    if C then A else B  C a boolean; only the chosen branch runs
                    or  and           booleans; stop at the first true (or) / false (and)
                    not               a boolean
                    ==  !=            any two values, compared deeply (1 == 1.0)
                    <  <=  >  >=      two numbers or two strings (strings by UTF-8 bytes)
                    ??                the left value unless it is null, else the right
                    +                 numbers; strings and lists join; objects merge (right
                                      wins, a null member removes the key); null + x = x
                    -  *  /  %        numbers; dividing by zero is an error
                    .name  [i]        a child (null when missing or on null); i a string or
                                      a whole number
                    len(x)            characters of a string, items of a list or object; null: 0
                    keys(x)           an object's keys in key order, a list's indexes; null: []
                    now()             the server's timestamp, placed in the result
                    abort(s)          gives up, with the reason s
                    Lists are stored as objects with keys 0, 1, ...; a type error stops the
                    transaction and points at the operator. Limits: 65,536 characters, 256 deep.
                    """,
                    build: CommandParser.tx),
        CommandSpec(name: "ondisconnect", argument: .path, usage: "ondisconnect [PATH set VALUE | PATH update OBJECT | PATH remove | PATH cancel]",
                    summary: "writes the server makes when this shell leaves",
                    details: "Registers a write the server makes when this shell's connection ends, however it ends (exit, a killed process, a lost network): set a value, apply an update, or remove the value. now() and increment(N) are resolved by the server then. cancel forgets those registered at PATH and below. Without arguments, lists what this session registered; a new connection starts with none (the server ran them when the old one ended).",
                    examples: ["ondisconnect /presence/ada remove", "ondisconnect /status/ada update {\"state\": \"offline\", \"lastSeen\": now()}", "ondisconnect /status/ada/lastSeen set now()",
                               "ondisconnect /presence/ada cancel", "ondisconnect"],
                    shortUsage: "ondisconnect [PATH ACTION [VALUE]]",
                    build: CommandParser.ondisconnect),
        CommandSpec(name: "online", usage: "online", summary: "connect again after 'offline'",
                    details: "Connects again: the writes and transactions queued while offline are sent in the order they were made, and listens resume. In a script, online then waits for the transactions queued since 'offline' and prints each one's outcome, as tx would have.",
                    build: CommandParser.bare(.online)),
        CommandSpec(name: "offline", usage: "offline", summary: "disconnect until 'online'",
                    details: "Disconnects from the database and stays offline until 'online'. Writes apply locally and queue, reads answer from what is cached (kept-synced paths, watches, and what earlier reads and writes left complete), and the server runs this session's onDisconnect writes. The prompt says offline.",
                    build: CommandParser.bare(.offline)),
        CommandSpec(name: "keepsynced", argument: .path, usage: "keepsynced [PATH on|off]",
                    summary: "keep a path's data cached and fresh",
                    details: "Keeps the data at PATH synced with the server, as if watched, so reads there work offline too. off stops. Without arguments, lists the kept-synced paths.",
                    examples: ["keepsynced /config on", "keepsynced /config off", "keepsynced"],
                    build: CommandParser.keepsynced),
        CommandSpec(name: "status", usage: "status", summary: "connection, pending writes, watches",
                    details: "Shows where the shell is connected (the embedded folder or the server's URL), whether it is online, the server's clock offset, the kind of credential (never the credential), writes and transactions not yet acknowledged, the disk cache (its size and the writes kept in it), background watches, kept-synced paths and onDisconnect writes.",
                    build: CommandParser.bare(.status)),
        CommandSpec(name: "pending", usage: "pending", summary: "list the writes not yet acknowledged",
                    details: "Lists the sets, updates, pushes and priorities the server has not acknowledged yet, oldest first, as they will be sent: while offline they queue, and with a server's database they are kept in the disk cache, so a shell started later sends them (transactions are not kept). --json prints a list of {\"op\", \"path\", \"value\"}.",
                    examples: ["pending", "pending --json"],
                    build: CommandParser.bare(.pending)),
        CommandSpec(name: "purge-writes", usage: "purge-writes [--force]", summary: "drop the queued writes",
                    details: "Drops every write not yet acknowledged, from memory and from the disk cache: their changes are taken back locally (watches see it) and they are never sent. One already sent may still be applied by the server. At a terminal it asks first, unless --force. Transactions are not affected.",
                    flags: [Flag(name: "--force", short: "-f", value: nil, help: "do not ask first")],
                    examples: ["purge-writes --force"],
                    build: CommandParser.purgeWrites),
        CommandSpec(name: "cache", usage: "cache [clear]", summary: "the disk cache of a server's database",
                    details: "Shows the disk cache that keeps a server's data and queued writes across restarts: its folder, the size of the cached data against its limit (--cache-size), and the writes kept. cache clear forgets the cached data, so reads offline no longer find it; queued writes stay (purge-writes drops those). An embedded database has no cache: its data is on disk already.",
                    examples: ["cache", "cache clear"],
                    needsServer: true,
                    build: CommandParser.cache),
        CommandSpec(name: "auth", usage: "auth TOKEN-FILE | auth --uid UID [--claims JSON]",
                    summary: "sign in: the server's rules see who you are",
                    details: "Sends the token in TOKEN-FILE (an ID token, a database secret, owner for a local server or the emulator, - for standard input) on this connection and every later one. With --uid, makes an unsigned ID token for UID (claims added with --claims), as the emulator's mockUserToken does: a local server takes it as it is, a hosted database would not, so it is refused for hosted URLs. The token is never printed or kept in history; status says whose it is.",
                    flags: [Flag(name: "--uid", value: "UID", help: "make an unsigned token for this user (local servers)"),
                            Flag(name: "--claims", value: "JSON", help: "with --uid: extra claims, a JSON object")],
                    examples: ["auth --uid ada", "auth --uid ada --claims '{\"admin\": true}'", "auth token.txt"],
                    needsServer: true,
                    build: CommandParser.auth),
        CommandSpec(name: "logout", usage: "logout", summary: "forget the credential",
                    details: "Sends unauth: this connection and later ones go on without a credential, as no one.",
                    needsServer: true,
                    build: CommandParser.bare(.logout)),
        CommandSpec(name: "rules", usage: "rules get | rules set FILE | rules check read|write|update PATH [VALUE] [--as UID] [--claims JSON] [--rules FILE] | rules coverage",
                    summary: "read, replace and try out the security rules",
                    details: "Reads or replaces the database's security rules (/.settings/rules.json), which takes the owner's credential: owner on a local server, an access token on a hosted one. FILE is JSON, comments allowed; rules with a mistake are refused with their line and column, and the old ones stay in force. Listens the new rules refuse are cancelled. An embedded database has no rules: only its owner uses it.\n\nrules check asks what the rules would say of a read, a write (VALUE as set takes it) or an update (an object of paths, as update takes it) at PATH, by the user --as names (with the claims of --claims; no one without --as), on the data as it is now, and writes nothing: allowed or denied, and every rule evaluated on the way with the value each part of it had. A server checks with its rules (the owner's credential is needed) or with those of --rules FILE; an embedded database, which has none, needs --rules. The status is 0 when allowed, 1 when denied, so a script can assert a table of cases.\n\nrules coverage prints what the requests of every client made of each rule since the rules were set: how many times each rule and each part of it was evaluated and what it gave (true, false, a value, an error), rules in the order of the file with their line and column, parts indented under the expression they belong to; a rule never evaluated says so. The server's /.inspect/coverage page shows the same on the rules file's text; --json gives its /.inspect/coverage.json.",
                    flags: [Flag(name: "--as", value: "UID", help: "rules check: as this user (auth.uid); no one without it"),
                            Flag(name: "--claims", value: "JSON", help: "rules check: with these claims in auth.token, a JSON object"),
                            Flag(name: "--rules", value: "FILE", help: "rules check: these rules instead of the database's")],
                    examples: ["rules get", "rules set rules.json", "rules check read /users/ada --as ada",
                               "rules check write /users/ada/name \"Ada L.\" --as ada --rules rules.json",
                               "rules check update /users {\"ada/name\": \"Ada\", \"bob/name\": \"Bob\"} --as ada --claims '{\"admin\": true}'", "rules coverage"],
                    shortUsage: "rules get|set|check|coverage",
                    needsServer: true,
                    words: ["": ["get", "set", "check", "coverage"], "check": ["read", "write", "update"]],
                    pathAfter: ["check read", "check write", "check update"],
                    build: CommandParser.rules),
        CommandSpec(name: "snapshot", usage: "snapshot save NAME | snapshot restore NAME | snapshot list | snapshot rm NAME",
                    summary: "save the whole database under a name, and put it back",
                    details: "snapshot save NAME keeps the whole tree as it is now, this session's writes included, under NAME (1 to 64 letters, digits, \"-\" and \"_\"), replacing a snapshot of that name. snapshot restore NAME makes the database what it was then, in one atomic write of /: listeners (watch, other clients) hear what changed, as from any write, and a restore takes the same moment for any size (the snapshot's file is read as the database's own is, not imported). A test suite saves its fixtures once and restores them before each case. snapshot list prints each snapshot's name, when it was saved (local time) and its size; --json prints {\"NAME\": {\"saved\": MILLISECONDS, \"bytes\": SIZE}}. snapshot rm NAME forgets one.\n\nSnapshots are kept in the data folder, beside the data: the embedded database's, or the namespace's on rtdb serve, which takes the owner's credential (/.settings/snapshots.json). Hosted Firebase and the Firebase emulator keep none.",
                    examples: ["snapshot save seed", "snapshot list", "set /users/ada/name \"Changed\"", "snapshot restore seed", "snapshot rm seed"],
                    shortUsage: "snapshot save|restore|list|rm",
                    ownerOnServer: true,
                    words: ["": ["save", "restore", "list", "rm"]],
                    build: CommandParser.snapshot),
        CommandSpec(name: "namespaces", usage: "namespaces", summary: "list the server's namespaces",
                    details: "Lists the namespaces (databases) of the server, one per line, the one in use marked with *: those that hold data or are open, as rtdb serve and the Firebase emulator list them (/.inspect/databases.json). --json prints a list of names. Hosted Firebase lists none: each database has its own URL.",
                    examples: ["namespaces", "namespaces --json"],
                    needsServer: true,
                    build: CommandParser.bare(.namespaces)),
        CommandSpec(name: "use", usage: "use NAMESPACE", summary: "move to another namespace of the server",
                    details: "Moves the session to another namespace of the same server, as psql's \\c: the writes not yet acknowledged are waited for first (or kept in the disk cache), background watches stop, the location goes back to /, and the same credential is used. The prompt names the namespace. A namespace that does not exist yet is made by its first write.",
                    examples: ["use examples-other", "set /note \"in another namespace\"", "use examples-use"],
                    needsServer: true,
                    build: CommandParser.use),
        CommandSpec(name: "sleep", usage: "sleep DURATION", summary: "wait, as scripts do for other writers",
                    details: "Waits for DURATION: 500ms, 2s, 1.5m, 1h, or a number of seconds (at most a day). Events of background watches keep arriving meanwhile. Ctrl-C ends the wait.",
                    examples: ["sleep 500ms", "sleep 2"],
                    build: CommandParser.sleep),
        CommandSpec(name: "repeat", argument: .command, usage: "repeat [COUNT] [--every DURATION] COMMAND",
                    summary: "run a command again and again",
                    details: "Runs COMMAND (a line as you would type it) COUNT times, or until Ctrl-C without COUNT, waiting DURATION between runs: 2s unless --every says (500ms, 1.5m, …), as psql's \\watch and redis-cli -r -i do. At a terminal the screen is cleared before each run, under a line with the command, the run's number and the time; otherwise each run's output follows the last. A run that fails stops it, and so does Ctrl-C. Commands that do not end by themselves (watch, query --watch, monitor, profile) or ask for input (edit) cannot be repeated.",
                    flags: [Flag(name: "--every", value: "DURATION", help: "wait this long between runs (2s by default)")],
                    examples: ["repeat 3 --every 100ms get /counters", "repeat 2 push /ticks now()"],
                    wrapsCommand: true,
                    build: CommandParser.repeatCommand),
        CommandSpec(name: "timing", usage: "timing [on|off]", summary: "print how long each command takes",
                    details: "Turns on (or off; alone, switches) a line after each command on standard error, 'Time: 1.234 ms': from the line's start to its end, its wait for the server included. rtdb --timing starts with it on.",
                    examples: ["timing on", "timing off"],
                    build: CommandParser.timing),
        CommandSpec(name: "pager", usage: "pager [on|off]", summary: "page output taller than the terminal",
                    details: "At a terminal, output taller than the window goes through $PAGER (less -FRX when unset), as psql and git do; pager off prints it straight (alone, switches). rtdb --no-pager starts without it. Streams (watch, query --watch) are never paged.",
                    examples: [],
                    build: CommandParser.pager),
        CommandSpec(name: "cd", argument: .path, usage: "cd [PATH]",
                    summary: "change the current path",
                    details: "Relative paths in later commands start here. PATH may use .. and .; without PATH, goes to /.",
                    examples: ["cd /users", "cd ada", "cd .."],
                    build: CommandParser.cd),
        CommandSpec(name: "pwd", usage: "pwd", summary: "print the current path",
                    details: "Prints the path relative paths start from.",
                    build: CommandParser.bare(.pwd)),
        CommandSpec(name: "help", argument: .command, usage: "help [COMMAND]", summary: "list commands, or explain one",
                    details: "Without COMMAND, lists every command; with it, shows its usage, flags and examples.",
                    examples: ["help", "help set"],
                    build: CommandParser.help),
        CommandSpec(name: "history", usage: "history", summary: "show the commands typed so far",
                    details: "Lists this session's command history, numbered. On a terminal it is kept in the history file across sessions.",
                    build: CommandParser.bare(.history)),
        CommandSpec(name: "exit", aliases: ["quit"], usage: "exit", summary: "leave the shell (also Ctrl-D)",
                    details: "Waits for every write to be acknowledged, then leaves.",
                    build: CommandParser.bare(.exit)),
    ]
}
