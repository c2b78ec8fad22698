/// The text of `help` and `help COMMAND`, built from the command table.
public enum Help {
    /// The command `help WORD` explains, or why there is none.
    public static func topic(_ word: String) throws -> CommandSpec {
        guard let spec = CommandSpec.find(word) else {
            var message = "no help for '\(word)': not a command"
            if let near = Suggest.nearest(word, in: CommandSpec.all.map(\.name)) { message += "; did you mean '\(near)'?" }
            throw ShellError(message)
        }
        return spec
    }

    public static func overview() -> String {
        var out = "Commands:\n"
        let width = CommandSpec.all.map(\.usage.count).max() ?? 0
        for spec in CommandSpec.all {
            let names = ([spec.usage] + spec.aliases.map { "(\($0))" }).joined(separator: " ")
            out += "  " + names.padding(toLength: max(width + 2, names.count + 2), withPad: " ", startingAt: 0) + spec.summary + "\n"
        }
        out += """

        Paths are absolute (/users/ada) or relative to the current path (ada/name, .., .).
        Values are JSON; a bare word that is not JSON is a string; @FILE reads a JSON file;
        now() is the server's timestamp and increment(N) adds N on the server, as the
        whole value or anywhere inside one ({"text": "hi", "at": now()}).
        Every command accepts --json for compact JSON output. 'help COMMAND' explains one.

        """
        return out
    }

    public static func command(_ name: String) -> String {
        guard let spec = CommandSpec.find(name) else { return overview() }
        var out = "usage: \(spec.usage)\n"
        if !spec.aliases.isEmpty { out += "also: \(spec.aliases.joined(separator: ", "))\n" }
        out += "\n" + wrap(spec.details, width: 76) + "\n"
        if let reference = spec.reference { out += "\n" + reference + "\n" }
        if !spec.allFlags.isEmpty {
            out += "\nflags:\n"
            for flag in spec.allFlags {
                var names = flag.name
                if let short = flag.short { names = "\(short), \(names)" }
                if let value = flag.value { names += " \(value)" }
                out += "  " + names.padding(toLength: max(22, names.count + 2), withPad: " ", startingAt: 0) + flag.help + "\n"
            }
        }
        if !spec.examples.isEmpty {
            out += "\nexamples:\n" + spec.examples.map { "  \($0)\n" }.joined()
        }
        return out
    }

    static func wrap(_ text: String, width: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n")
    }
}
