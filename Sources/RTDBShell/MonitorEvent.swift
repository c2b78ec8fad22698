import RTDBProtocol

/// What a monitor hears: an operation the database ran, or how many it lost because the
/// monitor fell behind.
public enum MonitorEvent: Sendable, Equatable {
    case operation(OperationRecord)
    case dropped(Int)
}
