/// An option of the `rtdb` program itself (before any command) or of `rtdb serve`: the one
/// table the completion scripts, the manual's OPTIONS section and `rtdb --help` are made
/// from. The executable declares the same options to its argument parser, with their help
/// from here; a test keeps the two lists equal.
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
    /// One line: what the completion scripts show.
    public var help: String
    /// What `--help` and the manual say: plain text in which `` `word` `` is literal (bold in
    /// the manual) and `*WORD*` stands for something (italic).
    public var details: String
    public var repeatable = false
    /// Says which database to open (`--data`, `--url`, …): completion passes it on when it
    /// reads keys.
    public var selectsDatabase = false

    public init(_ name: String, short: String? = nil, _ value: Value, _ help: String, repeatable: Bool = false, details: String = "") {
        self.name = name
        self.short = short
        self.value = value
        self.help = help
        self.details = details
        self.repeatable = repeatable
    }

    /// A flag that takes no value.
    public init(_ name: String, short: String? = nil, _ help: String, details: String = "") {
        self.init(name, short: short, .none, help, details: details)
    }

    /// What the value stands for (`DIR`, `URL`), nil for a flag.
    public var valueName: String? {
        switch value {
        case .none: return nil
        case .text(let name): return name
        case .file: return "FILE"
        case .directory: return "DIR"
        }
    }

    /// `details` as plain text, for `--help`: without its marks (a star inside a literal is
    /// itself).
    public var plainDetails: String {
        var literal = false
        return details.filter { character in
            if character == "`" { literal.toggle(); return false }
            return character != "*" || literal
        }
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
        ProgramOption("--data", .directory, "the embedded database data folder", details: """
            The embedded database's data folder (created if missing). Default: *$XDG_DATA_HOME/rtdb/default*, \
            or *~/.local/share/rtdb/default*.
            """).selecting,
        ProgramOption("--url", .text("URL"), "a server database URL (ws://127.0.0.1:9000?ns=demo)", details: """
            A server's database: `ws://127.0.0.1:9000?ns=demo` (also `http://`), or \
            *https://NAME.firebaseio.com* for hosted Firebase (see the manual's `REMOTE DATABASES`).
            """).selecting,
        ProgramOption("--emulator", .text("HOST:PORT"), "a local server or the emulator", details: """
            A local server or the Firebase emulator, as `FIREBASE_DATABASE_EMULATOR_HOST` names one. Alone \
            (no *HOST:PORT* after it), it takes that variable's value.
            """).selecting,
        ProgramOption("--ns", .text("NAME"), "the namespace with --emulator", details: """
            The namespace (database name) with `--emulator`.
            """).selecting,
        ProgramOption("--timeout", .text("DURATION"), "how long a command waits for the server", details: """
            How long a command waits for the server before it says so: a read, a write or a transaction at the \
            terminal, a transaction in a script, a script's write waiting for room among 10,000 unanswered ones \
            while none is answered, and a script's final wait for its writes (`500ms`, `10s`, `2m`). Default: \
            60 s; a script's final wait ends after 30 s in which no write was acknowledged (while \
            acknowledgements come, it waits on).
            """),
        ProgramOption("--cacert", .file, "trust the certificates in this PEM file (wss://, https://)", details: """
            With `wss://` or `https://`, trust the certificates in this PEM file instead of the system's.
            """).selecting,
        ProgramOption("--credentials", .file, "sign in with this service account key (OAuth2 tokens made here)", details: """
            Sign in to a server's database with this service account key (JSON, from the Firebase console): its \
            OAuth2 access tokens are made and renewed here (see the manual's `REMOTE DATABASES`).
            """).selecting,
        ProgramOption("--no-persistence", "keep no disk cache of a server's database", details: """
            With a server's database, keep no disk cache (see the manual's `OFFLINE AND THE DISK CACHE`): queued writes and \
            cached data last only as long as this shell.
            """),
        ProgramOption("--cache-size", .text("MB"), "the disk cache's limit, 1 to 100 MB", details: """
            The disk cache's limit, from 1 to 100 MB (default 10). Past it, the data least recently listened to \
            or read is evicted; queued writes and kept-synced data never are.
            """),
        ProgramOption("-c", .text("COMMAND"), "run COMMAND and exit", repeatable: true, details: """
            Run *COMMAND* and exit. Repeatable; the commands run in order.
            """),
        ProgramOption("--keep-going", "run the remaining lines after an error", details: """
            In a script, run the remaining lines after an error. The exit status still reports the failure.
            """),
        ProgramOption("--json", "every command's output as compact JSON", details: """
            Every command's output as compact JSON, as if each one said `--json` (also for every line of a script).
            """),
        ProgramOption("--format", .text("FORMAT"), "every command's output as json, ndjson, table, csv or tsv", details: """
            Every command's output in *FORMAT*, as if each one said `--format` *FORMAT* (a line's own `--json` or \
            `--format` wins): `json` (as `--json`), `ndjson` (one JSON value a line), `table`, `csv` or `tsv`.
            """),
        ProgramOption("--no-color", "no colour", details: """
            No colour, even on a terminal. Setting `NO_COLOR` does the same.
            """),
        ProgramOption("--no-pager", "print long output straight, not through $PAGER", details: """
            At a terminal, print output taller than the window straight instead of through `$PAGER` \
            (`less -FRX` when unset); `pager off` does the same from the prompt.
            """),
        ProgramOption("--timing", "print how long each command took", details: """
            After each command, print how long it took on standard error (`Time: 1.234 ms`), as `timing on` does.
            """),
        ProgramOption("--recover", "salvage a damaged embedded database and exit", details: """
            Salvage a damaged data folder: keep every log record that can be read, move the damaged files to a \
            `damaged-`*TIME* folder inside it, print what was left out, and exit.
            """),
        ProgramOption("--version", "print the version and exit", details: """
            Print the version and how the binary was built (debug or release, compiler, system), and exit.
            """),
        ProgramOption("--help", short: "-h", "show help", details: "Show the options."),
    ]

    /// The option named `name` (`--data`, `-c`) in `options` (by default, `rtdb`'s own).
    public static func named(_ name: String, in options: [ProgramOption] = global) -> ProgramOption? {
        options.first { $0.name == name }
    }

    /// `rtdb serve [OPTIONS]`.
    public static let serve: [ProgramOption] = [
        ProgramOption("--host", .text("ADDRESS"), "the address to listen on", details: """
            The address to listen on. Anything but 127.0.0.1 exposes the database to the network.
            """),
        ProgramOption("--port", .text("PORT"), "the port", details: """
            The port: the realtime protocol at `/.ws` and the REST API at */PATH*`.json`.
            """),
        ProgramOption("--data", .directory, "the folder of one database per namespace", details: """
            The folder holding one database per namespace (default *~/.local/share/rtdb/server*).
            """),
        ProgramOption("--tls-cert", .file, "serve TLS with this PEM certificate chain", details: """
            Serve TLS only (`wss://`, `https://`) with this PEM certificate chain.
            """),
        ProgramOption("--tls-key", .file, "the PEM private key of --tls-cert", details: """
            The PEM private key of `--tls-cert`.
            """),
        ProgramOption("--allow-origin", .text("ORIGIN"), "also serve web pages from this origin", repeatable: true, details: """
            Also serve web pages from this origin (repeatable; `*` for any). Pages served from `localhost` or \
            `127.0.0.1` are always allowed.
            """),
        ProgramOption("--allow-host", .text("NAME"), "also answer requests for this host name", repeatable: true, details: """
            Also answer requests whose `Host` header names this host (repeatable; `*` for any). IP addresses and \
            `localhost` are always answered.
            """),
        ProgramOption("--request-timeout", .text("SECONDS"), "seconds a request may take to arrive", details: """
            Seconds a client may take to send a request's head, or pause within its body; an idle \
            keep-alive connection is closed after twice this.
            """),
        ProgramOption("--rules", .file, "security rules for every namespace (JSON, comments allowed)", details: """
            Security rules for every namespace: a JSON file (`{"rules": {…}}`, comments allowed). Without it, \
            everyone may read and write everything. The owner replaces a namespace's rules at run time with \
            `PUT /.settings/rules.json` or the shell's `rules set`.
            """),
        ProgramOption("--log-rules", "log every decision of the security rules", details: """
            Log (on standard error) every decision of the security rules on a request that is not the \
            owner's, one line each: allowed or denied, the operation, the path, who asked, and each rule \
            evaluated with the value of each of its parts (`/users/$uid/.write at /users/bob: auth.uid == $uid → "alice" == "bob" → \
            false`). Refusals sent to clients carry the same explanation unless the server listens beyond this machine.
            """),
        ProgramOption("--no-viewer", "do not show the data viewer at /", details: """
            Do not serve the data viewer: without it, `http://HOST:PORT/` shows each namespace's data \
            in a browser (`/?ns=`*NAME*), read as the owner, live. It is a page of this server's own, \
            loading nothing from elsewhere.
            """),
        ProgramOption("--import", .directory, "load a firebase emulators:export folder at start", details: """
            Load a folder written by `firebase emulators:export` (or `--export-on-exit`) before listening: each \
            *NS*`.json` in its `database_export` folder replaces namespace *NS*'s data, priorities kept. Every \
            file is read and checked first; one that is not valid JSON stops the server and loads nothing.
            """),
        ProgramOption("--export-on-exit", .directory, "write an emulator export folder when stopped", details: """
            On SIGINT or SIGTERM, once every write is durable, write the data as `firebase emulators:export` \
            does: `firebase-export-metadata.json` and `database_export/`*NS*`.json` for every namespace that \
            holds data (or was imported), so `firebase emulators:start --import` and `rtdb serve --import` read it.
            """),
        ProgramOption("--recover", "salvage damaged databases and exit", details: """
            Salvage every damaged database in the data folder (keep what can be read, move the damaged files \
            aside, say what was lost), then exit.
            """),
        ProgramOption("--help", short: "-h", "show help", details: "Show the options."),
    ]

    /// Words that run something other than a shell command.
    public static let programCommands: [(name: String, summary: String)] = [
        ("serve", "run the local server"),
        ("completions", "print a completion script: bash, zsh or fish"),
    ]
}
