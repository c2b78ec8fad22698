import Foundation

/// The process exit statuses, as documented in the manual.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    /// A command failed (bad input, a rejected write, a failed read).
    case commandFailed = 1
    /// The command line itself was wrong.
    case usage = 2
    /// The database could not be opened (data folder in use or unreadable).
    case unavailable = 3
    /// Some writes were not acknowledged before exit.
    case unacknowledgedWrites = 4
}

import Foundation
