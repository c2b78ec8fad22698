import Synchronization

/// A result that arrives once and that any number of tasks can await. A waiting task that
/// is cancelled stops waiting with `CancellationError`; the result still reaches the others
/// and every handler.
public final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, Error>?
        var waiters: [Int: CheckedContinuation<Value, Error>] = [:]
        var handlers: [@Sendable (Result<Value, Error>) -> Void] = []
        var nextWaiter = 0
    }

    /// A lock inside the object: one is made for every write, so it must cost no allocation.
    private let state: Mutex<State>

    public init() {
        state = Mutex(State())
    }

    public init(_ result: Result<Value, Error>) {
        state = Mutex(State(result: result))
    }

    /// Sets the result; only the first call counts.
    public func resolve(_ outcome: Result<Value, Error>) {
        let taken = state.withLock { state -> (waiters: [CheckedContinuation<Value, Error>], handlers: [@Sendable (Result<Value, Error>) -> Void])? in
            guard state.result == nil else { return nil }
            state.result = outcome
            defer {
                state.waiters = [:]
                state.handlers = []
            }
            return (Array(state.waiters.values), state.handlers)
        }
        guard let taken else { return }
        for waiter in taken.waiters { waiter.resume(with: outcome) }
        for handler in taken.handlers { handler(outcome) }
    }

    /// The result if it has arrived.
    public var current: Result<Value, Error>? {
        state.withLock { $0.result }
    }

    /// Waits for the result.
    public func value() async throws -> Value {
        if let result = current { return try result.get() }
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Value, Error>) in
                let now: Result<Value, Error>? = state.withLock { state in
                    if let result = state.result { return result }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = waiter
                    return nil
                }
                if let now { waiter.resume(with: now) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Calls `handler` with the result when it arrives (at once if it has).
    public func whenResolved(_ handler: @escaping @Sendable (Result<Value, Error>) -> Void) {
        let result: Result<Value, Error>? = state.withLock { state in
            if state.result == nil { state.handlers.append(handler) }
            return state.result
        }
        if let result { handler(result) }
    }
}

extension OneShot where Value == Void {
    public func succeed() { resolve(.success(())) }
}
