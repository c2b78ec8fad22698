import Foundation
import RTDBClient
import RTDBData
import Synchronization

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
    final class Counter: Sendable {
        private let seen = Atomic(0)
        func count() { seen.add(1, ordering: .relaxed) }
        var value: Int { seen.load(ordering: .relaxed) }
    }
}
