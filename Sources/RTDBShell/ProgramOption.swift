/// An option of the `rtdb` program itself (before any command) or of `rtdb serve`: what the
/// completion scripts offer. The executable declares the same options to its argument
/// parser; a test keeps the two lists equal.
public struct ProgramOption: Sendable {
    public enum Value: Sendable {
        case none
        case text(String)
        case file
        case directory
    }

    public var name: String
    public var short: String?
    public var value: Value
    public var help: String
    public var repeatable = false
    /// Says which database to open (`--data`, `--url`, …): completion passes it on when it
    /// reads keys.
    public var selectsDatabase = false

    public init(_ name: String, short: String? = nil, _ value: Value, _ help: String, repeatable: Bool = false) {
        self.name = name
        self.short = short
        self.value = value
        self.help = help
        self.repeatable = repeatable
    }

    /// A flag that takes no value.
    public init(_ name: String, short: String? = nil, _ help: String) {
        self.init(name, short: short, .none, help)
    }

    /// This option, marked as one that says which database to open.
    var selecting: ProgramOption {
        var option = self
        option.selectsDatabase = true
        return option
    }

    public var takesValue: Bool { if case .none = value { return false }; return true }

    /// The options that say which database to open, as the completion scripts list them.
    public static var databaseOptions: [String] { global.filter(\.selectsDatabase).map(\.name) }

    /// `rtdb [OPTIONS] [COMMAND]`.
    public static let global: [ProgramOption] = [
        ProgramOption("--data", .directory, "the embedded database data folder").selecting,
        ProgramOption("--url", .text("URL"), "a server database URL (ws://127.0.0.1:9000?ns=demo)").selecting,
        ProgramOption("--emulator", .text("HOST:PORT"), "a local server or the emulator").selecting,
        ProgramOption("--ns", .text("NAME"), "the namespace with --emulator").selecting,
        ProgramOption("--timeout", .text("DURATION"), "how long a command waits for the server"),
        ProgramOption("--cacert", .file, "trust the certificates in this PEM file (wss://, https://)").selecting,
        ProgramOption("--credentials", .file, "sign in with this service account key (OAuth2 tokens made here)").selecting,
        ProgramOption("--no-persistence", "keep no disk cache of a server's database"),
        ProgramOption("--cache-size", .text("MB"), "the disk cache's limit, 1 to 100 MB"),
        ProgramOption("-c", .text("COMMAND"), "run COMMAND and exit", repeatable: true),
        ProgramOption("--keep-going", "run the remaining lines after an error"),
        ProgramOption("--json", "every command's output as compact JSON"),
        ProgramOption("--no-color", "no colour"),
        ProgramOption("--no-pager", "print long output straight, not through $PAGER"),
        ProgramOption("--timing", "print how long each command took"),
        ProgramOption("--recover", "salvage a damaged embedded database and exit"),
        ProgramOption("--version", "print the version and exit"),
        ProgramOption("--help", short: "-h", "show help"),
    ]

    /// `rtdb serve [OPTIONS]`.
    public static let serve: [ProgramOption] = [
        ProgramOption("--host", .text("ADDRESS"), "the address to listen on"),
        ProgramOption("--port", .text("PORT"), "the port"),
        ProgramOption("--data", .directory, "the folder of one database per namespace"),
        ProgramOption("--tls-cert", .file, "serve TLS with this PEM certificate chain"),
        ProgramOption("--tls-key", .file, "the PEM private key of --tls-cert"),
        ProgramOption("--allow-origin", .text("ORIGIN"), "also serve web pages from this origin", repeatable: true),
        ProgramOption("--allow-host", .text("NAME"), "also answer requests for this host name", repeatable: true),
        ProgramOption("--request-timeout", .text("SECONDS"), "seconds a request may take to arrive"),
        ProgramOption("--rules", .file, "security rules for every namespace (JSON, comments allowed)"),
        ProgramOption("--recover", "salvage damaged databases and exit"),
        ProgramOption("--help", short: "-h", "show help"),
    ]

    /// Words that run something other than a shell command.
    public static let programCommands: [(name: String, summary: String)] = [
        ("serve", "run the local server"),
        ("completions", "print a completion script: bash, zsh or fish"),
    ]
}
