import NIOCore
import NIOHTTP1
import RTDBData
import RTDBEngine
import RTDBProtocol
import Synchronization

/// The profiler's stream (`GET /.settings/profile.json`, `Accept: text/event-stream`): each
/// operation of the namespace as an `event: log` whose data is its JSON
/// (`OperationRecord.jsonBytes`), as `firebase database:profile` reads it. A client that reads
/// slower than the database runs loses operations rather than slowing it: they are counted,
/// and said in a `dropped` event whose data is text, not JSON (the profiler skips it).
final class ProfileStream: Sendable {
    private let events: ServerSentEvents
    private let subscription = Mutex<OperationFeed.Subscription?>(nil)
    /// Operations lost to a connection that could not take them, not said yet.
    private let unsent = Mutex(0)
    /// Bytes handed to the connection that its socket has not taken yet.
    private let waiting = Mutex(0)

    init(channel: Channel) {
        events = ServerSentEvents(channel: channel)
    }

    /// Starts the response and the feed of `feed`'s operations.
    func start(_ feed: OperationFeed, version: HTTPVersion, headers: [(String, String)]) {
        events.start(version: version, headers: headers)
        let started = feed.subscribe { [weak self] records, dropped in self?.send(records, dropped: dropped) }
        subscription.withLock { $0 = started }
    }

    func stop() {
        events.stop()
        subscription.withLock { $0 }?.cancel()
    }

    /// At most this much waits for the socket: past it, operations are dropped (and said),
    /// long before the connection's own budget (`OutboundBudget`) would close it.
    static let maxWaiting = 1 << 20
    /// And at most this much goes in one write.
    static let maxBatch = 256 << 10

    private func send(_ records: [OperationRecord], dropped: Int) {
        let lost = unsent.withLock { lost in
            defer { lost = 0 }
            return lost
        }
        var skipped = lost.addingSaturated(dropped)
        var batch: [(event: String, data: String)] = []
        var size = 0
        let room = ProfileStream.maxWaiting - waiting.withLock { $0 }
        for record in records {
            let text = String(decoding: record.jsonBytes, as: UTF8.self)
            guard size + text.utf8.count <= min(room, ProfileStream.maxBatch) else {
                skipped = skipped.addingSaturated(1)
                continue
            }
            size += text.utf8.count + 20
            batch.append(("log", text))
        }
        if skipped > 0 {
            if batch.isEmpty {
                // Nothing goes now: said with the next operations that do.
                unsent.withLock { $0 = $0.addingSaturated(skipped) }
                return
            }
            batch.insert(("dropped", "\(skipped) operation\(skipped == 1 ? " was" : "s were") dropped: this client read too slowly"), at: 0)
        }
        guard !batch.isEmpty else { return }
        let sent = size
        waiting.withLock { $0 += sent }
        events.write(events: batch) { [weak self] in self?.waiting.withLock { $0 -= sent } }
    }

}
