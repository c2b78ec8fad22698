import ArgumentParser
import RTDBShell

/// `rtdb completions bash|zsh|fish`: the completion script for a shell, generated from the
/// command table.
struct CompletionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completions",
        abstract: "Print a completion script: bash, zsh or fish.",
        helpNames: [.short, .long])

    @Argument(help: ArgumentHelp("The shell: bash, zsh or fish.", valueName: "SHELL"))
    var shell: String

    func validate() throws {
        guard CompletionScript.script(for: shell) != nil else {
            throw ValidationError("no completion script for '\(shell)': choose bash, zsh or fish")
        }
    }

    func run() {
        print(CompletionScript.script(for: shell) ?? "", terminator: "")
    }
}
