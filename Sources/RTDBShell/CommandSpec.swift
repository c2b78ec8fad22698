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
        /// A command name (`help`).
        case command
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
    /// Checks the command's arguments and flags and makes its `Command` (in `CommandParser`).
    let build: @Sendable (Arguments, Path) throws -> Command

    /// Flags every command accepts.
    public static let commonFlags: [Flag] = [
        Flag(name: "--json", value: nil, help: "compact JSON output, no colour (for programs)"),
    ]

    public var allFlags: [Flag] { flags + CommandSpec.commonFlags }

    public static func find(_ word: String) -> CommandSpec? {
        all.first { $0.name == word || $0.aliases.contains(word) }
    }

    public static let all: [CommandSpec] = [
        CommandSpec(name: "get", argument: .path, usage: "get [PATH] [--shallow] [--export]",
                    summary: "print the value at a path",
                    details: "Reads the value from the database and prints it: pretty and coloured on a terminal, compact JSON otherwise or with --json.",
                    flags: [Flag(name: "--shallow", value: nil, help: "children as true instead of their values"),
                            Flag(name: "--export", value: nil, help: "include priorities (.priority, .value)")],
                    examples: ["get /users/ada", "get users --shallow", "get / --json"],
                    build: CommandParser.get),
        CommandSpec(name: "set", argument: .path, usage: "set PATH VALUE [--priority P]",
                    summary: "overwrite the value at a path",
                    details: "Replaces the value at PATH. VALUE is JSON; a bare word that is not JSON is a string; @FILE reads JSON from a file; now() is the server's timestamp and increment(N) adds N to the number there. null removes.",
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
        CommandSpec(name: "query", argument: .path, usage: "query PATH [--orderByChild K | --orderByKey | --orderByValue | --orderByPriority] [--limitToFirst N | --limitToLast N] [--startAt V [KEY]] [--startAfter V [KEY]] [--endAt V [KEY]] [--endBefore V [KEY]] [--equalTo V [KEY]] [--watch]",
                    summary: "ordered, filtered children of a path",
                    details: "Prints the children the query selects, in query order, as a JSON array of {\"key\": K, \"value\": V} (a JSON object would lose the order). With --watch, keeps the query open and prints its events as the window changes, like watch.",
                    flags: queryFlags + [Flag(name: "--watch", value: nil, help: "keep watching the query's events"), eventsFlag, Flag(name: "--bg", value: nil, help: "with --watch: in the background")],
                    examples: ["query /notes --orderByChild lastModified --limitToLast 4", "query /users --orderByKey --startAt b --endBefore d",
                               "query /scores --orderByValue --equalTo 10", "query /notes --orderByChild lastModified --limitToLast 4 --watch"],
                    build: CommandParser.query),
        CommandSpec(name: "watch", argument: .path, usage: "watch [PATH] [query flags] [--events LIST] [--bg]",
                    summary: "stream live events",
                    details: "Prints each event at PATH as it happens: the time, the type, the child's key, the previous sibling's key and the data. In the foreground it runs until Ctrl-C; with --bg it runs in the background while you keep typing (see watches, unwatch). Not on a terminal, or with --json, one JSON object per line.",
                    flags: queryFlags + [eventsFlag, Flag(name: "--bg", value: nil, help: "run in the background")],
                    examples: ["watch /notes", "watch /notes --events child_added,child_removed --bg", "watch /.info/connected"],
                    build: CommandParser.watch),
        CommandSpec(name: "watches", usage: "watches", summary: "list background watches",
                    details: "Lists the background watches with their ids, paths, queries and event counts.",
                    build: CommandParser.watches),
        CommandSpec(name: "unwatch", usage: "unwatch ID|all", summary: "stop background watches",
                    details: "Stops the background watch with this id, or all of them.",
                    examples: ["unwatch 2", "unwatch all"],
                    build: CommandParser.unwatch),
        CommandSpec(name: "cd", argument: .path, usage: "cd [PATH]",
                    summary: "change the current path",
                    details: "Relative paths in later commands start here. PATH may use .. and .; without PATH, goes to /.",
                    examples: ["cd /users", "cd ada", "cd .."],
                    build: CommandParser.cd),
        CommandSpec(name: "pwd", usage: "pwd", summary: "print the current path",
                    details: "Prints the path relative paths start from.",
                    build: CommandParser.pwd),
        CommandSpec(name: "help", argument: .command, usage: "help [COMMAND]", summary: "list commands, or explain one",
                    details: "Without COMMAND, lists every command; with it, shows its usage, flags and examples.",
                    examples: ["help", "help set"],
                    build: CommandParser.help),
        CommandSpec(name: "history", usage: "history", summary: "show the commands typed so far",
                    details: "Lists this session's command history, numbered. On a terminal it is kept in the history file across sessions.",
                    build: CommandParser.history),
        CommandSpec(name: "exit", aliases: ["quit"], usage: "exit", summary: "leave the shell (also Ctrl-D)",
                    details: "Waits for every write to be acknowledged, then leaves.",
                    build: CommandParser.exit),
    ]
}
