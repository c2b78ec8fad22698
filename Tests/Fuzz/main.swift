import Foundation
#if canImport(Glibc)
import Glibc
#endif

// rtdb-fuzz: seeded mutation fuzzing of every reader of untrusted bytes.
//
//   rtdb-fuzz [--target NAME|all] [--seconds S] [--runs N] [--seed N] [--corpus DIR] [--out DIR]
//
// Each target starts from its corpus (DIR/NAME/*) and runs mutated inputs for S seconds (or N
// runs) each. A property that fails writes the input to OUT and exits 1; a trap or a crash
// is caught by a signal handler that writes the input it was running, then exits 70.

/// The input being run, where the signal handler can reach it without allocating.
nonisolated(unsafe) var currentInput = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1 << 17)
nonisolated(unsafe) var currentLength = 0
nonisolated(unsafe) var crashPath: UnsafeMutablePointer<CChar>? = nil

func installCrashHandler() {
    // A stack overflow must still find a stack to report on.
    let size = 1 << 16
    var alternate = stack_t()
    alternate.ss_sp = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
    alternate.ss_size = size
    sigaltstack(&alternate, nil)
    for sig in [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGABRT, SIGFPE] {
        var action = sigaction()
        action.sa_flags = SA_ONSTACK
        action.__sigaction_handler.sa_handler = { _ in
            if let crashPath {
                let fd = open(crashPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                if fd >= 0 {
                    _ = write(fd, currentInput.baseAddress, currentLength)
                    close(fd)
                }
                let note = "rtdb-fuzz: crashed (signal); the input is in the crash file\n"
                _ = note.withCString { write(2, $0, strlen($0)) }
            }
            _exit(70)
        }
        sigaction(sig, &action, nil)
    }
}

var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard flag.hasPrefix("--"), let value = arguments.popFirst() else {
        FileHandle.standardError.write(Data("usage: rtdb-fuzz [--target NAME|all] [--seconds S] [--runs N] [--seed N] [--corpus DIR] [--out DIR]\n".utf8))
        exit(2)
    }
    options[String(flag.dropFirst(2))] = value
}
let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path
let corpusRoot = options["corpus"] ?? here + "/corpus"
let out = options["out"] ?? FileManager.default.currentDirectoryPath
let seconds = Double(options["seconds"] ?? "10") ?? 10
let maxRuns = Int(options["runs"] ?? "") ?? Int.max
let seed = UInt64(options["seed"] ?? "") ?? UInt64(Date().timeIntervalSince1970)
let wanted = options["target"] ?? "all"
let targets = FuzzTarget.all.filter { wanted == "all" || $0.name == wanted }
if targets.isEmpty {
    FileHandle.standardError.write(Data("rtdb-fuzz: no target \(wanted); targets: \(FuzzTarget.all.map(\.name).joined(separator: ", "))\n".utf8))
    exit(2)
}
installCrashHandler()

var total = 0
for target in targets {
    let folder = corpusRoot + "/" + target.name
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    let corpus = names.compactMap { FileManager.default.contents(atPath: folder + "/" + $0).map { [UInt8]($0) } }
    let path = out + "/crash-\(target.name)-\(seed).bin"
    crashPath = strdup(path)
    var mutator = Mutator(seed: seed, corpus: corpus)
    let start = Date()
    var runs = 0
    // The corpus itself first, then mutations.
    var pending = corpus
    while runs < maxRuns && Date().timeIntervalSince(start) < seconds {
        let input = pending.popLast() ?? mutator.next()
        currentLength = min(input.count, currentInput.count)
        for i in 0..<currentLength { currentInput[i] = input[i] }
        do {
            try target.run(Array(input.prefix(currentLength)))
        } catch {
            _ = FileManager.default.createFile(atPath: path, contents: Data(input))
            print("rtdb-fuzz: \(target.name): \(error) (input in \(path))")
            exit(1)
        }
        runs += 1
    }
    total += runs
    print("rtdb-fuzz: \(target.name): \(runs) inputs in \(String(format: "%.1f", Date().timeIntervalSince(start))) s, no failure (seed \(seed), \(corpus.count) corpus files)")
}
print("rtdb-fuzz: \(total) inputs in all")
