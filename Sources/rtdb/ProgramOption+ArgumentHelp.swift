import ArgumentParser
import RTDBShell

extension ProgramOption {
    /// The `--help` text of the option `name` of `options` (`rtdb`'s, or `serve`'s), from the
    /// one table the manual and the completion scripts are also made from.
    static func argumentHelp(_ name: String, in options: [ProgramOption] = global) -> ArgumentHelp {
        guard let option = named(name, in: options) else { return ArgumentHelp() }
        return ArgumentHelp(option.plainDetails, valueName: option.valueName)
    }
}
