import NIOCore
import NIOHTTP1
import RTDBData
import RTDBEngine
import RTDBProtocol
import Synchronization

/// The profiler's stream (`GET /.settings/profile.json`, `Accept: text/event-stream`): each
/// operation of the namespace as an `event: log` whose data is its JSON
/// (`OperationRecord.json`), as `firebase database:profile` reads it. A client that reads
/// slower than the database runs loses operations rather than slowing it: they are counted,
/// and said in a `dropped` event whose data is text, not JSON (the profiler skips it).
final class ProfileStream: Sendable {
    private let events: ServerSentEvents
    private let subscription = Mutex<OperationFeed.Subscription?>(nil)
    /// Operations lost to a connection that could not take them, not said yet.
    private let unsent = Mutex(0)

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

    private func send(_ records: [OperationRecord], dropped: Int) {
        guard events.channel.isWritable else {
            unsent.withLock { $0 += records.count + dropped }
            return
        }
        let lost = unsent.withLock { lost in
            defer { lost = 0 }
            return lost
        } + dropped
        var batch: [(event: String, data: String)] = []
        if lost > 0 { batch.append(("dropped", "\(lost) operation\(lost == 1 ? " was" : "s were") dropped: this client read too slowly")) }
        for record in records { batch.append(("log", String(decoding: record.jsonBytes, as: UTF8.self))) }
        events.write(events: batch)
    }
}
