/// A database whose operations can be watched as they run (`monitor`): an embedded one (every
/// process on its folder included), or a server's namespace (its owner's).
public protocol OperationMonitoring: AnyObject, Sendable {
    /// The operations from now on, until the consumer stops reading.
    func operations() async throws -> AsyncThrowingStream<MonitorEvent, Error>
}
