import Foundation
import RTDBData

/// The server's clock as this client estimates it (the offset learnt from the handshake) and
/// the push ids made from it, shared by writers on any executor.
///
/// `@unchecked Sendable`: its state is guarded by `lock`, which the compiler cannot see.
final class ServerClock: @unchecked Sendable {
    private let lock = NSLock()
    private var offsetMilliseconds: Double = 0
    private var pushIDs = PushIDGenerator()

    var offset: Double {
        get { lock.withLock { offsetMilliseconds } }
        set { lock.withLock { offsetMilliseconds = newValue } }
    }

    /// Milliseconds since the epoch on the server's clock.
    var now: Double { (Date().timeIntervalSince1970 * 1000 + offset).rounded() }

    /// A new chronological key.
    func nextPushID() -> String {
        let now = Int64(self.now)
        return lock.withLock { pushIDs.next(now: now) }
    }
}
