import Foundation

/// Where the shell writes: standard output for results, standard error for messages.
public protocol Output: AnyObject {
    func write(_ text: String)
    func writeError(_ text: String)
}

/// The process's own stdout and stderr (stdout buffered, flushed per command).
public final class StandardOutput: Output {
    public init() {}
    public func write(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }
    public func writeError(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }
}

/// Collects output in memory (tests).
public final class BufferOutput: Output {
    public private(set) var stdout = ""
    public private(set) var stderr = ""
    public init() {}
    public func write(_ text: String) { stdout += text }
    public func writeError(_ text: String) { stderr += text }
}
