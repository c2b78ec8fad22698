import Foundation
import RTDBProtocol

// Follows the Firebase JS SDK's the reconnect backoff of PersistentConnection (core/PersistentConnection.ts).

/// Opens a transport to the server: the first time and after every loss. `host` is where
/// the server last said it lives (its hello or a redirect), nil for the configured address;
/// `lastSessionID` names the previous session so the server can tell a reconnection.
public typealias Connector = @Sendable (_ host: String?, _ lastSessionID: String?) -> Transport

/// How long to wait before connecting again after a connection is lost or refused.
///
/// Each failed attempt waits longer (exponential backoff with random jitter, so that many
/// clients of a restarted server do not all come back at once); a connection that stayed up
/// for `resetAfter` starts again from `minDelay`.
public struct ReconnectPolicy: Sendable {
    public var minDelay: TimeInterval
    public var maxDelay: TimeInterval
    public var multiplier: Double
    public var resetAfter: TimeInterval
    /// False: one connection only; losing it closes the client.
    public var enabled: Bool

    public init(minDelay: TimeInterval, maxDelay: TimeInterval, multiplier: Double = 1.3, resetAfter: TimeInterval = 30, enabled: Bool = true) {
        self.minDelay = minDelay
        self.maxDelay = maxDelay
        self.multiplier = multiplier
        self.resetAfter = resetAfter
        self.enabled = enabled
    }

    /// 1 s at first, growing by 1.3 each attempt up to 30 s.
    public static let standard = ReconnectPolicy(minDelay: 1, maxDelay: 30)
    public static let never = ReconnectPolicy(minDelay: 0, maxDelay: 0, enabled: false)
}

/// The state of the backoff between attempts.
struct Backoff {
    let policy: ReconnectPolicy
    private(set) var delay: TimeInterval
    private var lastAttempt: Date?
    private var lastEstablished: Date?

    init(policy: ReconnectPolicy) {
        self.policy = policy
        delay = policy.minDelay
    }

    mutating func attempting(at now: Date = Date()) { lastAttempt = now }
    mutating func established(at now: Date = Date()) { lastEstablished = now }

    /// How long to wait before the next attempt; grows the delay for the one after.
    mutating func nextWait(now: Date = Date(), random: Double = Double.random(in: 0...1)) -> TimeInterval {
        if let established = lastEstablished {
            if now.timeIntervalSince(established) > policy.resetAfter { delay = policy.minDelay }
            lastEstablished = nil
        }
        let sinceAttempt = lastAttempt.map { now.timeIntervalSince($0) } ?? delay
        let wait = max(0, delay - sinceAttempt) * random
        delay = min(policy.maxDelay, delay * policy.multiplier)
        return wait
    }
}
