import Foundation

/// A result that arrives once and that any number of tasks can await. A waiting task that
/// is cancelled stops waiting with `CancellationError`; the result still reaches the others
/// and every handler.
///
/// `@unchecked Sendable`: its state is guarded by `lock`, which the compiler cannot see.
public final class OneShot<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<Value, Error>?
    private var waiters: [Int: CheckedContinuation<Value, Error>] = [:]
    private var handlers: [@Sendable (Result<Value, Error>) -> Void] = []
    private var nextWaiter = 0

    public init() {}

    public init(_ result: Result<Value, Error>) {
        self.result = result
    }

    /// Sets the result; only the first call counts.
    public func resolve(_ outcome: Result<Value, Error>) {
        lock.lock()
        guard result == nil else { return lock.unlock() }
        result = outcome
        let waiting = waiters.values
        waiters = [:]
        let handlers = self.handlers
        self.handlers = []
        lock.unlock()
        for waiter in waiting { waiter.resume(with: outcome) }
        for handler in handlers { handler(outcome) }
    }

    public var isResolved: Bool { current != nil }

    /// The result if it has arrived.
    public var current: Result<Value, Error>? {
        lock.withLock { result }
    }

    /// Waits for the result.
    public func value() async throws -> Value {
        let id = lock.withLock {
            nextWaiter += 1
            return nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Value, Error>) in
                lock.lock()
                if let result {
                    lock.unlock()
                    waiter.resume(with: result)
                } else if Task.isCancelled {
                    lock.unlock()
                    waiter.resume(throwing: CancellationError())
                } else {
                    waiters[id] = waiter
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let waiter = waiters.removeValue(forKey: id)
            lock.unlock()
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Calls `handler` with the result when it arrives (at once if it has).
    public func whenResolved(_ handler: @escaping @Sendable (Result<Value, Error>) -> Void) {
        lock.lock()
        guard let result else {
            handlers.append(handler)
            return lock.unlock()
        }
        lock.unlock()
        handler(result)
    }
}

extension OneShot where Value == Void {
    public func succeed() { resolve(.success(())) }
}
