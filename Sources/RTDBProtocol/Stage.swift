/// One stage of a write's way from the user's line to the disk and back (see `StageClock`),
/// and the thread it runs on: stages of one thread add up to that thread's share of the time.
/// The stages of a thread never overlap; a stage that calls into the next layer on its own
/// thread includes that call (as `clientApply` includes writing the request to the socket's
/// queue, and `engine` the events it sends to watchers).
public enum Stage: Int, CaseIterable, Sendable {
    /// The shell, on the main actor: a line read into words and a command.
    case shellParse
    /// The client core, on its queue: a write layered into the sync tree and sent.
    case clientApply
    /// The client core, on its queue: an answer applied (acknowledged or reverted).
    case clientAcknowledge
    /// The client's event loop: frames joined and read into a message.
    case clientDecode
    /// The client's event loop: queued frames written to the socket.
    case clientSocketWrite
    /// The server's event loop: frames joined and read into a message.
    case serverDecode
    /// The server's event loop: queued frames written to the socket.
    case serverSocketWrite
    /// The engine, on the database's queue: rules, the tree, indexes, listeners, the record.
    case engine
    /// The committer: a round of records written to the log.
    case logWrite
    /// The committer: a round made durable (`fdatasync`).
    case logSync
    /// The committer: the round's answers sent (written as text and framed, over a socket).
    case answer

    var place: String {
        switch self {
        case .shellParse: return "main actor"
        case .clientApply, .clientAcknowledge: return "client core queue"
        case .clientDecode, .clientSocketWrite: return "client event loop"
        case .serverDecode, .serverSocketWrite: return "server event loop"
        case .engine: return "database queue"
        case .logWrite, .logSync, .answer: return "committer"
        }
    }

    var name: String {
        switch self {
        case .shellParse: return "parse"
        case .clientApply: return "apply"
        case .clientAcknowledge: return "acknowledge"
        case .clientDecode, .serverDecode: return "decode"
        case .clientSocketWrite, .serverSocketWrite: return "socket write"
        case .engine: return "engine"
        case .logWrite: return "log write"
        case .logSync: return "log sync"
        case .answer: return "answers"
        }
    }
}
