/// How the parser reads the words after a command's name, told without judging them: what
/// each word is, for the prompt's styling, its usage hint and Tab completion, which see
/// lines still being typed. The rules are `Arguments.split`'s, which reads the same words
/// and refuses what is wrong: a flag's value is the word after it (or after its `=`), a
/// query bound's optional KEY the word after that unless it is a flag, everything after
/// `--` an argument, and a wrapping command's line (`repeat`) starts at its first word that
/// is neither a flag nor a number.
struct ArgumentReading {
    enum Part {
        /// A flag, nil when the command has none of that name.
        case flag(CommandSpec.Flag?)
        /// A flag's value.
        case value(of: CommandSpec.Flag)
        /// A query bound's optional KEY.
        case key(of: CommandSpec.Flag)
        /// A positional argument.
        case argument
        /// A wrapping command's count.
        case count
        /// `--`: what follows are arguments, whatever they look like.
        case endOfFlags
    }

    /// What a word after the last would be.
    enum Next {
        case anything
        /// The value of this flag.
        case value(of: CommandSpec.Flag)
        /// This bound's KEY, unless it is a flag.
        case key(of: CommandSpec.Flag)
    }

    /// One part per word read, in order; the wrapped command's words (from `wrapped`) have none.
    private(set) var parts: [Part] = []
    private(set) var next = Next.anything
    /// Where the wrapped command's line starts, among the words.
    private(set) var wrapped: Int?

    /// The positional arguments, in order.
    func arguments<Word>(of words: [Word]) -> [Word] {
        zip(words, parts).compactMap { word, part in
            if case .argument = part { return word }
            return nil
        }
    }

    /// Reads `words`, the tokens after the command's name.
    init(_ words: [Token], spec: CommandSpec) {
        // By name, once: a pasted line may hold hundreds of flags.
        var flags: [String: CommandSpec.Flag] = [:]
        for flag in spec.allFlags {
            flags[flag.name] = flags[flag.name] ?? flag
            if let short = flag.short { flags[short] = flags[short] ?? flag }
        }
        var index = 0
        while index < words.count {
            let word = words[index]
            if case .value(let flag) = next {
                parts.append(.value(of: flag))
                next = flag.optionalKey ? .key(of: flag) : .anything
                index += 1
                continue
            }
            if case .key(let flag) = next {
                next = .anything
                if !Arguments.isFlag(word) {
                    parts.append(.key(of: flag))
                    index += 1
                    continue
                }
            }
            let isFlag = Arguments.isFlag(word)
            if spec.wrapsCommand && !isFlag {
                if Int(word.text) != nil || (word.kind == .word && !word.text.isEmpty && word.text.utf8.allSatisfy { (0x30...0x39).contains($0) }) {
                    parts.append(.count)
                    index += 1
                    continue
                }
                wrapped = index
                return
            }
            if word.kind == .word && word.text == "--" {
                parts.append(.endOfFlags)
                parts += Array(repeating: .argument, count: words.count - index - 1)
                return
            }
            guard isFlag else {
                parts.append(.argument)
                index += 1
                continue
            }
            let inline = word.text.utf8.contains(UInt8(ascii: "="))
            let name = inline ? String(word.text.prefix { $0 != "=" }) : word.text
            let flag = flags[name]
            parts.append(.flag(flag))
            if let flag, flag.value != nil {
                next = inline ? (flag.optionalKey ? .key(of: flag) : .anything) : .value(of: flag)
            }
            index += 1
        }
    }
}
