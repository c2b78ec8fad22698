/// The bash, zsh and fish completion scripts, made from the command table (`CommandSpec`)
/// and the program's options (`ProgramOption`): `rtdb completions SHELL` prints them, and the
/// files in completions/ are their output.
public enum CompletionScript {
    public static let shells = ["bash", "zsh", "fish"]

    public static func script(for shell: String) -> String? {
        switch shell {
        case "bash": return bash()
        case "zsh": return zsh()
        case "fish": return fish()
        default: return nil
        }
    }

    // MARK: What the scripts are made of

    static var commandNames: [String] { CommandSpec.all.flatMap { [$0.name] + $0.aliases } }
    static var pathCommands: [String] { CommandSpec.all.filter { $0.argument == .path || $0.argument == .paths }.flatMap { [$0.name] + $0.aliases } }
    /// The commands every argument of which is a path (`cp SRC DST`).
    static var twoPathCommands: [String] { CommandSpec.all.filter { $0.argument == .paths }.flatMap { [$0.name] + $0.aliases } }

    /// The commands whose arguments start with fixed words (`rules check read`): for each,
    /// the words typed after the command so far ("" for none) and what comes next.
    static var wordCommands: [(names: [String], words: [(after: String, next: [String])])] {
        CommandSpec.all.filter { !$0.words.isEmpty }.map { spec in
            ([spec.name] + spec.aliases, spec.words.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        }
    }

    static func names(_ flag: CommandSpec.Flag) -> [String] { [flag.name] + (flag.short.map { [$0] } ?? []) }
    static func names(_ option: ProgramOption) -> [String] { [option.name] + (option.short.map { [$0] } ?? []) }

    /// Strips the leading dashes for fish's -l/-s.
    static func bare(_ name: String) -> String { String(name.drop { $0 == "-" }) }

    /// Single quotes for the shells, with embedded ones escaped as the shell wants.
    static func quoted(_ text: String, zsh: Bool = false) -> String {
        var out = text.replacingOccurrences(of: "'", with: "'\\''")
        if zsh { out = out.replacingOccurrences(of: ":", with: "\\:").replacingOccurrences(of: "[", with: "\\[").replacingOccurrences(of: "]", with: "\\]") }
        return "'" + out + "'"
    }

    /// How long completion waits for a database's keys.
    static let keyDeadline = "2s"

    // MARK: bash

    static func bash() -> String {
        let commands = (commandNames + ProgramOption.programCommands.map(\.name)).joined(separator: " ")
        let options = ProgramOption.global.flatMap(names).joined(separator: " ")
        let database = ProgramOption.databaseOptions.joined(separator: "|")
        let valued = ProgramOption.global.filter { $0.takesValue && !$0.selectsDatabase }.flatMap(names).joined(separator: "|")
        let fileOptions = (ProgramOption.global + ProgramOption.serve).filter { if case .file = $0.value { return true }; return false }
        let files = Array(Set(fileOptions.map(\.name))).sorted().joined(separator: "|")
        var wordCases = ""
        for command in wordCommands {
            wordCases += "            \(command.names.joined(separator: "|")))\n                case \"${words[*]:cmdi+1:cword-cmdi-1}\" in\n"
            for (after, next) in command.words {
                wordCases += "                    \(quoted(after))) COMPREPLY=($(compgen -W \"\(next.joined(separator: " "))\" -- \"$cur\")); return ;;\n"
            }
            wordCases += "                esac ;;\n"
        }
        // A flag's fixed values, after it (--format, --events).
        var valueCases = ""
        let chosen = Dictionary(CommandSpec.all.flatMap(\.allFlags).filter { !$0.choices.isEmpty }.map { ($0.name, $0.choices) }, uniquingKeysWith: { a, _ in a })
        for (name, choices) in chosen.sorted(by: { $0.key < $1.key }) {
            valueCases += "        \(name)) COMPREPLY=($(compgen -W \"\(choices.joined(separator: " "))\" -- \"$cur\")); return ;;\n"
        }
        var flagCases = ""
        flagCases += "            serve) flags=\"\(ProgramOption.serve.flatMap(names).joined(separator: " "))\" ;;\n"
        for spec in CommandSpec.all where !spec.flags.isEmpty {
            let patterns = ([spec.name] + spec.aliases).joined(separator: "|")
            flagCases += "            \(patterns)) flags+=\" \(spec.flags.flatMap(names).joined(separator: " "))\" ;;\n"
        }
        return """
        # bash completion for rtdb: commands, flags, and child keys read from the database.
        # Made by 'rtdb completions bash'. Source it from ~/.bashrc, or copy it to
        # /usr/share/bash-completion/completions/rtdb.

        _rtdb_keys() {
            # Child keys of $1 in the database the other arguments choose (--data DIR, --url URL, …),
            # with a short deadline so a slow server does not hold the prompt.
            local parent=$1
            shift
            rtdb "$@" --no-persistence --timeout \(keyDeadline) ls "$parent" --json 2>/dev/null |
                sed -e 's/^\\[//' -e 's/\\]$//' -e 's/","/"\\n"/g' | sed -e 's/^"//' -e 's/"$//'
        }

        _rtdb() {
            # The words as typed, split at spaces only: bash's COMP_WORDS also splits at : and =,
            # which cuts a URL (ws://host:9000?ns=x) or HOST:PORT into pieces.
            local -a words
            if [[ -n ${COMP_LINE-} ]]; then
                read -ra words <<< "${COMP_LINE:0:COMP_POINT}"
                [[ ${COMP_LINE:0:COMP_POINT} == *[[:space:]] ]] && words+=("")
            else
                words=("${COMP_WORDS[@]}")
            fi
            local cword=$((${#words[@]} - 1))
            local cur=${words[cword]} prev=${words[cword-1]}
            local commands="\(commands)"
            local options="\(options)"

            local i cmd="" cmdi=0 nokeys=""
            local -a db=()
            for ((i = 1; i < cword; i++)); do
                case ${words[i]} in
                    \(database))
                        # A --data folder that does not exist has no keys (and must not be made).
                        [[ ${words[i]} == --data && ! -d ${words[i+1]} ]] && nokeys=1
                        db+=("${words[i]}" "${words[i+1]}"); ((i++)) ;;
                    \(valued)) ((i++)) ;;
                    -*) ;;
                    *) cmd=${words[i]}; cmdi=$i; break ;;
                esac
            done

            case $prev in
                --data) COMPREPLY=($(compgen -d -- "$cur")); return ;;
                \(files)) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        \(valueCases)    esac
            if [[ -z $cmd ]]; then
                COMPREPLY=($(compgen -W "$commands $options" -- "$cur"))
                return
            fi
            if [[ $cmd == completions ]]; then
                COMPREPLY=($(compgen -W "\(shells.joined(separator: " "))" -- "$cur"))
                return
            fi
            if [[ $cur == -* ]]; then
                local flags="\(CommandSpec.commonFlags.flatMap(names).joined(separator: " "))"
                case $cmd in
        \(flagCases)        esac
                COMPREPLY=($(compgen -W "$flags" -- "$cur"))
                return
            fi
            if [[ $cmd == help ]]; then
                COMPREPLY=($(compgen -W "\(commandNames.joined(separator: " "))" -- "$cur"))
                return
            fi
            # The words some commands take first (rules check read, snapshot save).
            case $cmd in
        \(wordCases)        esac
            # The first argument of the data commands is a path: complete it key by key.
            case $cmd in \(pathCommands.joined(separator: "|"))) ;; *) return ;; esac
            local last=1
            case $cmd in \(twoPathCommands.joined(separator: "|"))) last=2 ;; esac
            ((cword > cmdi && cword <= cmdi + last)) && [[ -z $nokeys ]] || return
            local dir="" partial=$cur
            if [[ $cur == */* ]]; then
                dir=${cur%/*}/
                partial=${cur##*/}
            fi
            local parent=${dir:-/}
            local key
            COMPREPLY=()
            while IFS= read -r key; do
                [[ -n $key && $key == "$partial"* ]] && COMPREPLY+=("$dir$key")
            done < <(_rtdb_keys "$parent" "${db[@]}")
            compopt -o nospace 2>/dev/null
            if ((${#COMPREPLY[@]} == 1)); then
                COMPREPLY[0]+="/"
            fi
            # Bash replaces only what follows the last : or = of the word it split there.
            local cut=${cur%"${cur##*[:=]}"}
            [[ -n $cut && $COMP_WORDBREAKS == *[:=]* ]] && COMPREPLY=("${COMPREPLY[@]#"$cut"}")
        }

        complete -F _rtdb rtdb

        """
    }

    // MARK: zsh

    /// Text that goes inside a single-quoted zsh word: each ' closes the word, adds an
    /// escaped quote and opens it again.
    static func zshQuoteSafe(_ text: String) -> String {
        text.replacingOccurrences(of: "'", with: "'\\''")
    }

    static func zshOption(_ option: ProgramOption) -> String {
        let help = "[" + zshQuoteSafe(option.help).replacingOccurrences(of: "]", with: "\\]").replacingOccurrences(of: "[", with: "\\[") + "]"
        var action = ""
        switch option.value {
        case .none: break
        case .text(let name): action = ":" + name.lowercased().replacingOccurrences(of: ":", with: "\\:") + ":"
        case .file: action = ":file:_files"
        case .directory: action = ":folder:_directories"
        }
        let prefix = option.repeatable ? "*" : ""
        if let short = option.short {
            return "'(\(short) \(option.name))'{\(short),\(option.name)}'\(help)\(action)'"
        }
        return "'\(prefix)\(option.name)\(help)\(action)'"
    }

    static func zshFlag(_ flag: CommandSpec.Flag) -> String {
        let help = "[" + flag.help.replacingOccurrences(of: "'", with: "").replacingOccurrences(of: "[", with: "(").replacingOccurrences(of: "]", with: ")") + "]"
        var action = ""
        if let value = flag.value {
            let name = value.split(separator: " ").first.map(String.init)?.lowercased() ?? "value"
            action = flag.choices.isEmpty ? ":\(name):" : ":\(name):(\(flag.choices.joined(separator: " ")))"
        }
        if let short = flag.short { return "{\(short),\(flag.name)}'\(help)\(action)'" }
        return "'\(flag.name)\(help)\(action)'"
    }

    static func zsh() -> String {
        var described: [String] = []
        for spec in CommandSpec.all {
            for name in [spec.name] + spec.aliases { described.append("        '\(name):\(zshQuoteSafe(spec.summary).replacingOccurrences(of: ":", with: "\\:"))'") }
        }
        for (name, summary) in ProgramOption.programCommands { described.append("        '\(name):\(zshQuoteSafe(summary).replacingOccurrences(of: ":", with: "\\:"))'") }
        var wordCases = ""
        for command in wordCommands {
            wordCases += "                    \(command.names.joined(separator: "|")))\n                        case \"${(j: :)words[2,CURRENT-1]}\" in\n"
            for (after, next) in command.words {
                wordCases += "                            \(quoted(after))) compadd -- \(next.joined(separator: " ")); return ;;\n"
            }
            wordCases += "                        esac ;;\n"
        }
        var flagCases = "                serve) flags=(\(ProgramOption.serve.map(zshOption).joined(separator: " "))) ;;\n"
        for spec in CommandSpec.all where !spec.flags.isEmpty {
            flagCases += "                \(([spec.name] + spec.aliases).joined(separator: "|"))) flags+=(\(spec.flags.map(zshFlag).joined(separator: " "))) ;;\n"
        }
        return """
        #compdef rtdb
        # zsh completion for rtdb: commands, flags, and child keys read from the database.
        # Made by 'rtdb completions zsh'. Put this file, named _rtdb, in a folder on $fpath.

        _rtdb_paths() {
            # $_rtdb_db: the database options of the command line, set by _rtdb.
            local -a keys
            local cur=$PREFIX dir="" parent
            [[ $cur == */* ]] && dir=${cur%/*}/
            parent=${dir:-/}
            keys=(${(f)"$(rtdb $_rtdb_db --no-persistence --timeout \(keyDeadline) ls $parent --json 2>/dev/null |
                sed -e 's/^\\[//' -e 's/\\]$//' -e 's/","/"\\n"/g' | sed -e 's/^"//' -e 's/"$//')"})
            compadd -S / -p "$dir" -- $keys
        }

        _rtdb() {
            local -a commands
            commands=(
        \(described.joined(separator: "\n"))
            )
            local -A opt_args
            _arguments -C \\
        \(ProgramOption.global.map { "        " + zshOption($0) + " \\" }.joined(separator: "\n"))
                '1: :->command' \\
                '*:: :->args' && return
            case $state in
                command) _describe 'command' commands ;;
                args)
                    # The program's options, as the outer _arguments read them (an inner one
                    # starts afresh); their values come backslash-escaped.
                    local -a _rtdb_db flags
                    local option value
                    for option in \(ProgramOption.databaseOptions.joined(separator: " ")); do
                        [[ -n ${opt_args[$option]} ]] || continue
                        value=${opt_args[$option]//\\\\:/:}
                        _rtdb_db+=($option ${(Q)value})
                    done
                    flags=(\(CommandSpec.commonFlags.map(zshFlag).joined(separator: " ")))
                    case $words[1] in
        \(flagCases)                help) _describe 'command' commands; return ;;
                        completions) _values 'shell' \(shells.joined(separator: " ")); return ;;
                    esac
                    # The words some commands take first (rules check read, snapshot save).
                    if [[ $PREFIX != -* ]]; then
                        case $words[1] in
        \(wordCases)                    esac
                    fi
                    case $words[1] in
                        \(twoPathCommands.joined(separator: "|")))
                            _arguments $flags '1:path:_rtdb_paths' '2:path:_rtdb_paths' ;;
                        \(pathCommands.joined(separator: "|")))
                            _arguments $flags '1:path:_rtdb_paths' '*:value:' ;;
                        *) _arguments $flags ;;
                    esac
                    ;;
            esac
        }

        _rtdb "$@"

        """
    }

    // MARK: fish

    static func fishOption(_ option: ProgramOption, condition: String?) -> String {
        var line = "complete -c rtdb"
        if let condition { line += " -n \"\(condition)\"" }
        if option.name.hasPrefix("--") { line += " -l \(bare(option.name))" } else { line += " -s \(bare(option.name))" }
        if let short = option.short { line += " -s \(bare(short))" }
        switch option.value {
        case .none: break
        case .text: line += " -x"
        case .file: line += " -r -F"
        case .directory: line += " -r -a '(__fish_complete_directories)'"
        }
        return line + " -d \(quoted(option.help))"
    }

    static func fish() -> String {
        let all = (commandNames + ProgramOption.programCommands.map(\.name)).joined(separator: " ")
        var lines: [String] = []
        lines.append("set -l commands \(all)")
        lines.append("complete -c rtdb -f")
        for option in ProgramOption.global {
            lines.append(fishOption(option, condition: "not __fish_seen_subcommand_from $commands"))
        }
        for spec in CommandSpec.all {
            lines.append("complete -c rtdb -n \"not __fish_seen_subcommand_from $commands\" -a \(quoted(([spec.name] + spec.aliases).joined(separator: " "))) -d \(quoted(spec.summary))")
        }
        for (name, summary) in ProgramOption.programCommands {
            lines.append("complete -c rtdb -n \"not __fish_seen_subcommand_from $commands\" -a \(name) -d \(quoted(summary))")
        }
        for option in ProgramOption.serve {
            lines.append(fishOption(option, condition: "__fish_seen_subcommand_from serve"))
        }
        lines.append("complete -c rtdb -n \"__fish_seen_subcommand_from completions\" -a \(quoted(shells.joined(separator: " ")))")
        lines.append("complete -c rtdb -n \"__fish_seen_subcommand_from \(pathCommands.joined(separator: " "))\" -a '(__rtdb_paths)'")
        lines.append("complete -c rtdb -n \"__fish_seen_subcommand_from \(commandNames.joined(separator: " "))\" -l json -d 'compact JSON output'")
        lines.append("complete -c rtdb -n \"__fish_seen_subcommand_from \(commandNames.joined(separator: " "))\" -l format -x -a \(quoted(OutputFormat.names.joined(separator: " "))) -d 'output format'")
        for spec in CommandSpec.all {
            for flag in spec.flags {
                var line = "complete -c rtdb -n \"__fish_seen_subcommand_from \(([spec.name] + spec.aliases).joined(separator: " "))\" -l \(bare(flag.name))"
                if let short = flag.short { line += " -s \(bare(short))" }
                if flag.value != nil { line += " -x" }
                if !flag.choices.isEmpty { line += " -a \(quoted(flag.choices.joined(separator: " ")))" }
                lines.append(line + " -d \(quoted(flag.help))")
            }
        }
        lines.append("complete -c rtdb -n \"__fish_seen_subcommand_from help\" -a \(quoted(commandNames.joined(separator: " ")))")
        for command in wordCommands {
            for name in command.names {
                for (after, next) in command.words {
                    lines.append("complete -c rtdb -n \"__rtdb_words_after \(name) \(after)\" -a \(quoted(next.joined(separator: " ")))")
                }
            }
        }
        return """
        # fish completion for rtdb: commands, flags, and child keys read from the database.
        # Made by 'rtdb completions fish'. Copy to ~/.config/fish/completions/rtdb.fish.

        # True when the words typed after command $argv[1] are exactly $argv[2..].
        function __rtdb_words_after
            set -l words (commandline -opc)
            set -l at (contains -i -- $argv[1] $words); or return 1
            set -l after
            test (count $words) -gt $at; and set after $words[(math $at + 1)..-1]
            set -l typed (string join ' ' -- $after)
            set -l wanted (string join ' ' -- $argv[2..-1])
            test "$typed" = "$wanted"
        end

        function __rtdb_paths
            set -l cur (commandline -ct)
            set -l dir ''
            if string match -q '*/*' -- $cur
                set dir (string replace -r '[^/]*$' '' -- $cur)
            end
            set -l parent $dir
            test -z "$parent"; and set parent /
            set -l words (commandline -opc)
            set -l db
            for i in (seq (count $words))
                if contains -- $words[$i] \(ProgramOption.databaseOptions.joined(separator: " "))
                    set -l next (math $i + 1)
                    test $next -le (count $words); and set db $db $words[$i] $words[$next]
                end
            end
            rtdb $db --no-persistence --timeout \(keyDeadline) ls $parent --json 2>/dev/null | string trim -c '[]' | string split '","' | string trim -c '"' | while read -l key
                test -n "$key"; and echo $dir$key/
            end
        end

        \(lines.joined(separator: "\n"))

        """
    }
}
