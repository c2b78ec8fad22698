import Foundation
import RTDBClient
import RTDBData

/// A watch running in the background of the interactive shell.
final class BackgroundWatch {
    let id: Int
    let query: QuerySpec
    let events: Set<EventType>
    let registration: EventRegistration
    private let seen: Counter

    init(id: Int, query: QuerySpec, events: Set<EventType>, registration: EventRegistration, seen: Counter) {
        self.id = id
        self.query = query
        self.events = events
        self.registration = registration
        self.seen = seen
    }

    var eventCount: Int { seen.value }

    /// Events seen, counted on the client core's queue and read by the shell.
    /// `@unchecked Sendable`: guarded by `lock`, which the compiler cannot see.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var seen = 0
        func count() { lock.withLock { seen += 1 } }
        var value: Int { lock.withLock { seen } }
    }
}
