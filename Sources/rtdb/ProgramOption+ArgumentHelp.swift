import ArgumentParser
import RTDBShell

extension ProgramOption {
    /// The `--help` text of the program option `name`, from the one table the manual and the
    /// completion scripts are also made from.
    static func argumentHelp(_ name: String) -> ArgumentHelp {
        guard let option = named(name) else { return ArgumentHelp() }
        return ArgumentHelp(option.plainDetails, valueName: option.valueName)
    }
}
