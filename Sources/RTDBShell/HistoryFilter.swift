import Foundation
import Synchronization

/// Lines that may carry a credential never reach the history file: lines with a keyword
/// that introduces one, and any line that contains the credential in use (however it was
/// typed, say pasted as a value).
public enum HistoryFilter {
    /// The credentials this process holds (from the environment, `auth`, renewed access
    /// tokens), never shorter than 8 characters so ordinary words are not taken for one. A
    /// token is renewed on another thread while the shell reads.
    private static let held = Mutex(["RTDB_AUTH_TOKEN", "RTDB_ACCESS_TOKEN"]
        .compactMap { ProcessEnvironment.value($0) }.filter { $0.count >= 8 })

    /// Remembers a credential this process now holds.
    public static func hold(_ credential: String) {
        guard credential.count >= 8 else { return }
        held.withLock { held in
            if !held.contains(credential) { held.append(credential) }
        }
    }

    public static func isSensitive(_ line: String) -> Bool {
        if held.withLock({ $0.contains(where: { line.contains($0) }) }) { return true }
        let lower = line.lowercased()
        let words = lower.split(separator: " ").map(String.init)
        if let first = words.first, first == "auth" || first == "login" { return true }
        return ["--token", "--credentials", "--secret", "--password", "access_token=", "auth="].contains { lower.contains($0) }
    }
}
