import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The variables of this process's environment, read one at a time. `ProcessInfo`'s
/// `environment` copies every variable into a new dictionary at each use, a cost at every
/// start for the one or two a command reads.
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
