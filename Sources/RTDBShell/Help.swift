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

    /// The command list, laid out for a terminal `width` columns wide: each command's short
    /// usage, then its summary in a column beside it (on the next line when the usage is too
    /// long or the terminal too narrow), folded to the width.
    public static func overview(width: Int = 80) -> String {
        let width = max(40, width)
        let longest = CommandSpec.all.map { names($0).count }.max() ?? 0
        let column = min(longest, 30) + 4
        // Too narrow for two columns: each summary under its command.
        let beside = width - column >= 30
        var out = "Commands:\n"
        for spec in CommandSpec.all {
            let left = "  " + names(spec)
            let indent = beside ? column : 6
            let summary = wrap(spec.summary, width: width - indent).split(separator: "\n").map(String.init)
            if beside && left.count + 2 <= column {
                out += left.padding(toLength: column, withPad: " ", startingAt: 0) + (summary.first ?? "") + "\n"
            } else {
                out += left + "\n" + String(repeating: " ", count: indent) + (summary.first ?? "") + "\n"
            }
            for line in summary.dropFirst() { out += String(repeating: " ", count: indent) + line + "\n" }
        }
        out += "\n" + wrap("""
        Paths are absolute (/users/ada) or relative to the current path (ada/name, .., .). \
        Values are JSON; a bare word that is not JSON is a string; @FILE reads a JSON file; \
        now() is the server's timestamp and increment(N) adds N on the server, as the whole \
        value or anywhere inside one ({"text": "hi", "at": now()}). Every command accepts \
        --json for compact JSON output, and --format json|ndjson|table|csv|tsv. 'help COMMAND' \
        explains one, with its flags and examples.
        """, width: min(width, 100) - 1) + "\n"
        return out
    }

    /// A command's short usage and its aliases, as the list shows them.
    private static func names(_ spec: CommandSpec) -> String {
        ([spec.synopsis] + spec.aliases.map { "(\($0))" }).joined(separator: " ")
    }

    /// One command: usage (folded to the width), details, reference, flags and examples.
    public static func command(_ name: String, width: Int = 80) -> String {
        guard let spec = CommandSpec.find(name) else { return overview(width: width) }
        let width = max(40, width)
        let text = min(width, 100) - 1
        var out = "usage: " + wrap(spec.usage, width: text - 7).replacingOccurrences(of: "\n", with: "\n       ") + "\n"
        if !spec.aliases.isEmpty { out += "also: \(spec.aliases.joined(separator: ", "))\n" }
        out += "\n" + wrap(spec.details, width: text) + "\n"
        if let reference = spec.reference { out += "\n" + reference + "\n" }
        if !spec.allFlags.isEmpty {
            out += "\nflags:\n"
            for flag in spec.allFlags {
                var names = flag.name
                if let short = flag.short { names = "\(short), \(names)" }
                if let value = flag.value { names += " \(value)" }
                let lines = wrap(flag.help, width: max(20, text - 24)).split(separator: "\n").map(String.init)
                if names.count + 4 <= 24 {
                    out += "  " + names.padding(toLength: 22, withPad: " ", startingAt: 0) + (lines.first ?? "") + "\n"
                } else {
                    out += "  " + names + "\n" + String(repeating: " ", count: 24) + (lines.first ?? "") + "\n"
                }
                for line in lines.dropFirst() { out += String(repeating: " ", count: 24) + line + "\n" }
            }
        }
        if !spec.examples.isEmpty {
            out += "\nexamples:\n" + spec.examples.map { "  \($0)\n" }.joined()
        }
        return out
    }

    static func wrap(_ text: String, width: Int) -> String {
        // Paragraphs (a blank line between) are wrapped each on its own.
        text.components(separatedBy: "\n\n").map { wrapParagraph($0, width: width) }.joined(separator: "\n\n")
    }

    private static func wrapParagraph(_ text: String, width: Int) -> String {
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
