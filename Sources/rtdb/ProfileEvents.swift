import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBShell
import RTDBTransport
import Synchronization

/// The operations a monitor reads, from a database in this process (its feed) or from a
/// server's profiler stream (`/.settings/profile.json`: `log` events of the operation's
/// JSON, `dropped` events saying how many were lost). A consumer that falls behind by
/// `capacity` loses the next ones too, and is told how many.
enum ProfileEvents {
    static let capacity = 50_000

    static func from(_ feed: OperationFeed) -> AsyncThrowingStream<MonitorEvent, Error> {
        let (events, continuation) = AsyncThrowingStream<MonitorEvent, Error>.makeStream(bufferingPolicy: .bufferingOldest(capacity))
        let sender = Sender(continuation)
        let subscription = feed.subscribe(capacity: capacity) { records, dropped in
            sender.lost(dropped)
            for record in records { sender.send(.operation(record)) }
        }
        continuation.onTermination = { _ in subscription.cancel() }
        return events
    }

    static func from(_ stream: AsyncThrowingStream<EventStreamClient.Event, Error>) -> AsyncThrowingStream<MonitorEvent, Error> {
        let (events, continuation) = AsyncThrowingStream<MonitorEvent, Error>.makeStream(bufferingPolicy: .bufferingOldest(capacity))
        let sender = Sender(continuation)
        let reader = Task {
            do {
                for try await event in stream {
                    switch event.name {
                    case "log":
                        guard let json = try? JSONValue.parse(event.data), let record = OperationRecord(json: json) else { continue }
                        sender.send(.operation(record))
                    case "dropped":
                        // A count of at most nine digits: a larger one is no count.
                        sender.lost(Int(event.data.prefix { $0.isNumber }.prefix(9)) ?? 0)
                    default:
                        continue  // keep-alive
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in reader.cancel() }
        return events
    }

    /// Yields to the stream, counting what its full buffer refuses and saying it before the
    /// next operation it takes.
    private final class Sender: Sendable {
        private let continuation: AsyncThrowingStream<MonitorEvent, Error>.Continuation
        private let unsaid = Mutex(0)

        init(_ continuation: AsyncThrowingStream<MonitorEvent, Error>.Continuation) { self.continuation = continuation }

        func lost(_ count: Int) {
            if count > 0 { unsaid.withLock { $0 = $0.addingSaturated(count) } }
        }

        func send(_ event: MonitorEvent) {
            let lost = unsaid.withLock { lost in
                defer { lost = 0 }
                return lost
            }
            if lost > 0, case .dropped = continuation.yield(.dropped(lost)) {
                unsaid.withLock { $0 = $0.addingSaturated(lost.addingSaturated(1)) }
                return
            }
            if case .dropped = continuation.yield(event) { unsaid.withLock { $0 = $0.addingSaturated(1) } }
        }
    }
}
