import Foundation

/// An operation given a time limit did not finish within it.
public struct TimeoutError: Error, Sendable, CustomStringConvertible {
    public let seconds: TimeInterval
    public var description: String { "no answer within \(Int(seconds)) seconds" }
}

/// Runs `operation`, cancelling it and throwing `TimeoutError` when `seconds` pass first.
/// The operation must end when cancelled (the core's waits do).
public func withTimeout<T: Sendable>(_ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TimeoutError(seconds: seconds) }
        return value
    }
}
