import ArgumentParser
import Foundation
import RTDBShell
#if canImport(Glibc)
import Glibc
#endif

/// The program: the shell by default (`rtdb [OPTIONS] [COMMAND]`), `rtdb serve`,
/// `rtdb completions SHELL` and `rtdb help [COMMAND]`.
@main
struct RTDBCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtdb",
        abstract: ShellCommand.configuration.abstract,
        subcommands: [ShellCommand.self, ServeCommand.self, CompletionsCommand.self, ShellHelpCommand.self],
        defaultSubcommand: ShellCommand.self,
        // `rtdb --help` reaches the shell, the default, whose options are the program's.
        helpNames: [])

    /// Usage errors exit with 2 (as documented), not ArgumentParser's 64.
    static func main() async {
        do {
            // Concrete types only: a cast to a protocol would scan every conformance at start-up.
            let arguments = try ShellCommand.resolvingBareEmulator(Array(CommandLine.arguments.dropFirst()))
            switch try parseAsRoot(arguments) {
            case let shell as ShellCommand: try await shell.run()
            case let serve as ServeCommand: try serve.run()
            case var other: try other.run()
            }
        } catch let code as ExitCode {
            // How the shell ends, successful or not, having said what it had to: ArgumentParser's
            // general path would first build (and discard) an error message for it.
            Foundation.exit(code.rawValue)
        } catch {
            if exitCode(for: error) == .validationFailure {
                let message = fullMessage(for: error)
                // A subcommand's message ends with its own usage line and is told as its own;
                // the shell's gets the short usage.
                let subcommand = namedSubcommands.compactMap { $0.configuration.commandName }.first { message.contains("Usage: rtdb \($0) ") }
                // The shell is the hidden default subcommand: users know it as plain `rtdb`.
                let text = subcommand.map { "rtdb \($0): \(message)\n" }
                    ?? message.replacingOccurrences(of: "rtdb shell --help", with: "rtdb --help") + "\n"
                FileHandle.standardError.write(Data(text.utf8))
                Foundation.exit(ExitStatus.usage.rawValue)
            }
            exit(withError: error)
        }
    }

    /// The subcommands a user names (the shell is the default; `help` is its help).
    static let namedSubcommands: [any ParsableCommand.Type] = [ServeCommand.self, CompletionsCommand.self]

    static func subcommand(named word: String?) -> (any ParsableCommand.Type)? {
        namedSubcommands.first { $0.configuration.commandName == word }
    }
}
