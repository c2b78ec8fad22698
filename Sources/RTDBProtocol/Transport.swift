/// Carries protocol messages to the other side of a connection.
///
/// Messages sent from one thread arrive in the order sent. Handlers are called on the
/// transport's own thread; receivers hop onto their own queue.
public protocol Transport: AnyObject, Sendable {
    /// Starts delivery; `onMessage` for each message, then `onClose` once.
    func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void)
    func send(_ message: Message)
    /// Sends `message` unless it is larger than the peer takes in one message; then sends
    /// nothing and returns false (a server refuses such a read rather than have the peer drop
    /// the connection over it and ask again).
    func sendIfItFits(_ message: Message) -> Bool
    /// Sends `encoding.message`; a transport that writes bytes writes the shared ones.
    func send(sharing encoding: SharedEncoding)
    func close()
}

extension Transport {
    /// A transport with no limit of its own on a message (one within a process) sends it.
    public func sendIfItFits(_ message: Message) -> Bool {
        send(message)
        return true
    }

    /// A transport that carries messages as they are (one within a process) sends the message.
    public func send(sharing encoding: SharedEncoding) {
        send(encoding.message)
    }
}
