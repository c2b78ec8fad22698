import Foundation
import RTDBData
import RTDBProtocol

/// One connection to a server: numbers requests, matches responses to them, holds requests
/// made before the handshake, and tracks the server time offset.
///
/// Not thread-safe by itself: the `Repo` that owns it calls it on its own serial queue, and
/// incoming messages are hopped onto that queue.
final class PersistentConnection {
    private let transport: Transport
    private let queue: DispatchQueue
    private var nextRequestID = 1
    private var callbacks: [Int: (Response) -> Void] = [:]
    private var waiting: [(Request, (Response) -> Void)] = []
    private(set) var connected = false
    private(set) var closed = false
    private(set) var serverTimeOffset: Double = 0
    private(set) var sessionID: String?
    var onConnectedChange: ((Bool) -> Void)?
    var onPush: ((Push) -> Void)?

    init(transport: Transport, queue: DispatchQueue) {
        self.transport = transport
        self.queue = queue
    }

    func start() {
        let queue = self.queue
        transport.start(onMessage: { [weak self] message in
            queue.async { self?.receive(message) }
        }, onClose: { [weak self] in
            queue.async { self?.transportClosed() }
        })
    }

    /// Sends now if connected, otherwise as soon as the handshake arrives.
    func send(_ request: Request, completion: @escaping (Response) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        if closed {
            return completion(.error("disconnected", "the connection is closed"))
        }
        guard connected else {
            waiting.append((request, completion))
            return
        }
        let id = nextRequestID
        nextRequestID += 1
        callbacks[id] = completion
        transport.send(.request(id: id, request))
    }

    var outstandingRequests: Int { callbacks.count + waiting.count }

    func close() {
        transport.close()
    }

    private func receive(_ message: Message) {
        switch message {
        case .handshake(let hello):
            sessionID = hello.sessionID
            serverTimeOffset = Double(hello.timestamp) - (Date().timeIntervalSince1970 * 1000)
            connected = true
            onConnectedChange?(true)
            let held = waiting
            waiting = []
            for (request, completion) in held { send(request, completion: completion) }
        case .response(let id, let response):
            callbacks.removeValue(forKey: id)?(response)
        case .push(let push):
            onPush?(push)
        case .ping:
            transport.send(.pong)
        case .shutdown, .reset:
            transport.close()
        default:
            break
        }
    }

    private func transportClosed() {
        connected = false
        closed = true
        onConnectedChange?(false)
        let pending = callbacks.sorted { $0.key < $1.key }.map(\.value) + waiting.map(\.1)
        callbacks = [:]
        waiting = []
        for callback in pending { callback(.error("disconnected", "the connection closed before the server answered")) }
    }
}
