import Foundation
import RTDBData
import Synchronization

/// The server's clock as this client estimates it (the offset learnt from the handshake) and
/// the push ids made from it, shared by writers on any executor.
final class ServerClock: Sendable {
    private let state = Mutex((offset: 0.0, pushIDs: PushIDGenerator()))

    var offset: Double {
        get { state.withLock { $0.offset } }
        set { state.withLock { $0.offset = newValue } }
    }

    /// Milliseconds since the epoch on the server's clock.
    var now: Double { (Date().timeIntervalSince1970 * 1000 + offset).rounded() }

    /// A new chronological key.
    func nextPushID() -> String {
        let now = Int64(self.now)
        return state.withLock { $0.pushIDs.next(now: now) }
    }
}
