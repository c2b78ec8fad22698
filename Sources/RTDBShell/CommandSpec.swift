/// What a command accepts and how it is explained: the single source for the parser,
/// `help`, and completion.
public struct CommandSpec: Sendable {
    public struct Flag: Sendable {
        public var name: String        // "--priority"
        public var short: String?      // "-f"
        public var value: String?      // "P" when the flag takes a value
        public var help: String
    }

    public var name: String
    public var aliases: [String] = []
    public var usage: String
    public var summary: String
    public var details: String
    public var flags: [Flag] = []
    public var examples: [String] = []

    /// Flags every command accepts.
    public static let commonFlags: [Flag] = [
        Flag(name: "--json", value: nil, help: "compact JSON output, no colour (for programs)"),
    ]

    public var allFlags: [Flag] { flags + CommandSpec.commonFlags }

    public static func find(_ word: String) -> CommandSpec? {
        all.first { $0.name == word || $0.aliases.contains(word) }
    }

    public static let all: [CommandSpec] = [
        CommandSpec(name: "get", usage: "get [PATH] [--shallow] [--export]",
                    summary: "print the value at a path",
                    details: "Reads the value from the database and prints it: pretty and coloured on a terminal, compact JSON otherwise or with --json.",
                    flags: [Flag(name: "--shallow", value: nil, help: "children as true instead of their values"),
                            Flag(name: "--export", value: nil, help: "include priorities (.priority, .value)")],
                    examples: ["get /users/ada", "get users --shallow", "get / --json"]),
        CommandSpec(name: "set", usage: "set PATH VALUE [--priority P]",
                    summary: "overwrite the value at a path",
                    details: "Replaces the value at PATH. VALUE is JSON; a bare word that is not JSON is a string; @FILE reads JSON from a file; now() is the server's timestamp and increment(N) adds N to the number there. null removes.",
                    flags: [Flag(name: "--priority", value: "P", help: "also set the priority (a number or a string)")],
                    examples: ["set /users/ada {\"name\": \"Ada\", \"born\": 1815}", "set /flags/beta true", "set /greeting hello",
                               "set /seen now()", "set /counters/visits increment(1)", "set /config @config.json"]),
        CommandSpec(name: "update", usage: "update PATH OBJECT",
                    summary: "atomic multi-path update",
                    details: "Writes each key of OBJECT below PATH in one atomic step; keys may be deeper paths (\"a/b\": 1) and null removes. Either all of it is written or none of it.",
                    examples: ["update /users/ada {\"name\": \"Ada King\", \"address/city\": \"London\"}", "update / {\"a/x\": 1, \"b\": null}"]),
        CommandSpec(name: "push", usage: "push PATH [VALUE]",
                    summary: "append under a new chronological key",
                    details: "Generates a push id (20 characters that sort by creation time), writes VALUE under it and prints the key. Without VALUE only the key is generated.",
                    examples: ["push /messages {\"text\": \"hi\", \"at\": now()}"]),
        CommandSpec(name: "remove", aliases: ["rm"], usage: "remove PATH [--force]",
                    summary: "delete the value at a path",
                    details: "Deletes PATH and everything below it. On a terminal it asks before removing the root or a subtree of more than 100 values; in a script removing the root needs --force.",
                    flags: [Flag(name: "--force", short: "-f", value: nil, help: "do not ask")],
                    examples: ["rm /sessions/old", "remove / --force"]),
        CommandSpec(name: "priority", usage: "priority PATH P",
                    summary: "set the priority of a value",
                    details: "Sets the priority (a number, a string, or null to clear it) used by the default ordering.",
                    examples: ["priority /tasks/a 10", "priority /tasks/b null"]),
        CommandSpec(name: "ls", usage: "ls [PATH] [--long]",
                    summary: "list child keys",
                    details: "Lists the keys of PATH's children in key order. With --long, each key is followed by its number of children or its value.",
                    flags: [Flag(name: "--long", short: "-l", value: nil, help: "show child counts and values")],
                    examples: ["ls", "ls /users -l"]),
        CommandSpec(name: "cd", usage: "cd [PATH]",
                    summary: "change the current path",
                    details: "Relative paths in later commands start here. PATH may use .. and .; without PATH, goes to /.",
                    examples: ["cd /users", "cd ada", "cd .."]),
        CommandSpec(name: "pwd", usage: "pwd", summary: "print the current path",
                    details: "Prints the path relative paths start from."),
        CommandSpec(name: "help", usage: "help [COMMAND]", summary: "list commands, or explain one",
                    details: "Without COMMAND, lists every command; with it, shows its usage, flags and examples.",
                    examples: ["help", "help set"]),
        CommandSpec(name: "history", usage: "history", summary: "show the commands typed so far",
                    details: "Lists this session's command history, numbered. On a terminal it is kept in the history file across sessions."),
        CommandSpec(name: "exit", aliases: ["quit"], usage: "exit", summary: "leave the shell (also Ctrl-D)",
                    details: "Waits for every write to be acknowledged, then leaves."),
    ]
}
