import ArgumentParser
import Foundation
import RTDBShell

/// `rtdb help [COMMAND]`: the shell's `help`, without opening a database. It takes the name
/// ArgumentParser would give its own help command: `rtdb --help` is the program's help;
/// `rtdb help serve` and `rtdb help completions` show those subcommands' help.
struct ShellHelpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "help",
        abstract: "List the shell's commands, or explain one.",
        shouldDisplay: false)

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("A shell command (or serve, completions).", valueName: "COMMAND"))
    var words: [String] = []

    func run() throws {
        if let subcommand = RTDBCommand.subcommand(named: words.first) {
            return print(RTDBCommand.helpMessage(for: subcommand))
        }
        guard words.count <= 1 else {
            FileHandle.standardError.write(Data("rtdb help: one command at most: rtdb help [COMMAND]\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        do {
            let width = Terminal.width
            print(try words.first.map { Help.command(try Help.topic($0).name, width: width) } ?? Help.overview(width: width), terminator: "")
        } catch {
            FileHandle.standardError.write(Data("rtdb help: \(error)\n".utf8))
            throw ExitCode(ExitStatus.commandFailed.rawValue)
        }
    }
}
