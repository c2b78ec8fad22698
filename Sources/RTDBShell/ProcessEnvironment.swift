import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The variables of this process's environment, read one at a time. `ProcessInfo`'s
/// `environment` copies every variable into a new dictionary at each use, which was 3% of a
/// one-shot command's start-up for the one or two it reads.
public enum ProcessEnvironment {
    /// The variable's value, or nil when it is not set.
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The variable's value, or nil when it is not set or empty.
    public static func nonEmpty(_ name: String) -> String? {
        value(name).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `$HOME`, or the home folder the system has for this user.
    public static var home: String {
        value("HOME") ?? NSHomeDirectory()
    }
}
