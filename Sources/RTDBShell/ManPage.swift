/// The manual's OPTIONS and COMMANDS sections, made from the program's option table and the
/// command table. man/rtdb.1 holds each between two marker comments; a test keeps them equal
/// (scripts/generate-docs rewrites them).
public enum ManPage {
    public static let beginMarker = #".\" BEGIN COMMANDS (made from the command table by scripts/generate-docs; do not edit)"#
    public static let endMarker = #".\" END COMMANDS"#
    public static let optionsBeginMarker = #".\" BEGIN OPTIONS (made from ProgramOption.global by scripts/generate-docs; do not edit)"#
    public static let optionsEndMarker = #".\" END OPTIONS"#

    public static let serveOptionsBeginMarker = #".\" BEGIN SERVE OPTIONS (made from ProgramOption.serve by scripts/generate-docs; do not edit)"#
    public static let serveOptionsEndMarker = #".\" END SERVE OPTIONS"#

    /// The OPTIONS section: `rtdb`'s own options.
    public static func optionsSection() -> String {
        ([optionsBeginMarker, ".SH OPTIONS"] + optionList(ProgramOption.global) + [optionsEndMarker]).joined(separator: "\n") + "\n"
    }

    /// The options of `rtdb serve`, in the SERVER section.
    public static func serveOptionsSection() -> String {
        ([serveOptionsBeginMarker] + optionList(ProgramOption.serve) + [serveOptionsEndMarker]).joined(separator: "\n") + "\n"
    }

    /// One tagged paragraph per option: its names and value, then what it does.
    private static func optionList(_ options: [ProgramOption]) -> [String] {
        options.flatMap { option -> [String] in
            var names = flag(option.name)
            if let short = option.short { names = flag(short) + ", " + names }
            if let value = option.valueName { names += " \\fI" + text(value) + "\\fR" }
            return [".TP", names, marked(option.details)]
        }
    }

    /// Text with `` `literal` `` in bold and `*placeholder*` in italic (a star inside a literal
    /// is itself), safe for roff.
    static func marked(_ s: String) -> String {
        var out = ""
        var bold = false, italic = false
        for character in text(s) {
            switch character {
            case "`":
                out += bold ? "\\fR" : "\\fB"
                bold.toggle()
            case "*" where !bold:  // inside a literal, a star is a star
                out += italic ? "\\fR" : "\\fI"
                italic.toggle()
            default:
                out.append(character)
            }
        }
        return out
    }

    public static func commandsSection() -> String {
        var out = [".SH COMMANDS",
                   "Every command accepts \(flag("--json")): compact JSON output with no colour, and \(flag("--format")) \\fIFORMAT\\fR: \\fBjson\\fR (as \(flag("--json"))), \\fBndjson\\fR (a JSON value a line: an object's children as {\"key\", \"value\"}, a list's elements), \\fBtable\\fR, \\fBcsv\\fR (RFC 4180) or \\fBtsv\\fR. A table, CSV or TSV has a row per child (in query order), its key in the .key column, a column per field of the first 100 children, a child that is not an object in .value, nested values as compact JSON; watch and monitor print csv and tsv a row per event. In the shell, \\fBhelp\\fR \\fICOMMAND\\fR shows a command's examples."]
        for spec in CommandSpec.all {
            out.append(".TP")
            var head = usage(spec.usage)
            if !spec.aliases.isEmpty { head += " (also " + spec.aliases.map { "\\fB\($0)\\fR" }.joined(separator: ", ") + ")" }
            out.append(head)
            // A blank line between paragraphs is a paragraph break within the entry.
            out.append(spec.details.components(separatedBy: "\n\n").map(text).joined(separator: "\n.sp\n"))
            if let reference = spec.reference {
                out += [".IP", ".nf"] + reference.split(separator: "\n", omittingEmptySubsequences: false).map { text(String($0)) } + [".fi"]
            }
            if !spec.flags.isEmpty {
                out.append(".RS")
                for f in spec.flags {
                    out.append(".TP")
                    var names = flag(f.name)
                    if let short = f.short { names = flag(short) + ", " + names }
                    if let value = f.value { names += " " + usage(value, commandFirst: false) }
                    out.append(names)
                    out.append(text(f.help))
                }
                out.append(".RE")
            }
        }
        return ([beginMarker] + out + [endMarker]).joined(separator: "\n") + "\n"
    }

    /// Text safe for roff: backslashes and dashes escaped, anything not ASCII as a named
    /// Unicode character (`\[u2192]`, which every groff reads without preconv), no line
    /// starting with a control character.
    static func text(_ s: String) -> String {
        var escaped = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\e"
            case "-": escaped += "\\-"
            case _ where scalar.isASCII: escaped.unicodeScalars.append(scalar)
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                escaped += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { return "\\&" + escaped }
        return escaped
    }

    static func flag(_ name: String) -> String { "\\fB" + text(name) + "\\fR" }

    /// A usage line: the command in bold, flags in bold, placeholders (upper case) in italics.
    static func usage(_ line: String, commandFirst: Bool = true) -> String {
        var out = ""
        var word = ""
        var first = commandFirst
        func flush() {
            guard !word.isEmpty else { return }
            if first || word.hasPrefix("-") {
                out += flag(word)
            } else if word.allSatisfy({ $0.isUppercase || $0 == "_" }) {
                out += "\\fI" + text(word) + "\\fR"
            } else {
                out += text(word)
            }
            first = false
            word = ""
        }
        for ch in line {
            if "[]| ".contains(ch) {
                flush()
                out.append(ch)
            } else {
                word.append(ch)
            }
        }
        flush()
        return out
    }
}
