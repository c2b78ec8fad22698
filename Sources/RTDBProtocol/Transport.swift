/// Carries protocol messages to the other side of a connection.
///
/// Messages sent from one thread arrive in the order sent. Handlers are called on the
/// transport's own thread; receivers hop onto their own queue.
public protocol Transport: AnyObject, Sendable {
    /// Starts delivery; `onMessage` for each message, then `onClose` once.
    func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void)
    func send(_ message: Message)
    func close()
}
