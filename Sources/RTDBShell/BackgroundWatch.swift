import Foundation
import RTDBClient
import RTDBData

/// A watch running in the background of the interactive shell.
final class BackgroundWatch {
    let id: Int
    let query: QuerySpec
    let events: Set<EventType>
    let registration: EventRegistration
    private let lock = NSLock()
    private var seen = 0

    init(id: Int, query: QuerySpec, events: Set<EventType>, registration: EventRegistration) {
        self.id = id
        self.query = query
        self.events = events
        self.registration = registration
    }

    func count() { lock.lock(); seen += 1; lock.unlock() }
    var eventCount: Int { lock.lock(); defer { lock.unlock() }; return seen }
}
