import RTDBData

// Follows the Firebase JS SDK's Operation, Overwrite, Merge, AckUserWrite and ListenComplete (core/operation/).

/// Who an operation comes from: the user, the server, or the server for one tagged query.
enum OperationSource: Equatable {
    case user
    case server
    case taggedQuery(String)

    var fromUser: Bool { self == .user }
    var queryID: String? { if case .taggedQuery(let id) = self { return id }; return nil }
}

/// A change to apply to the sync tree, relative to the location it is applied at.
enum Operation {
    case overwrite(OperationSource, Path, Node)
    case merge(OperationSource, Path, PathTree<Node>)
    case ackUserWrite(Path, affected: PathTree<Bool>, revert: Bool)
    case listenComplete(OperationSource, Path)

    var path: Path {
        switch self {
        case .overwrite(_, let p, _), .merge(_, let p, _), .ackUserWrite(let p, _, _), .listenComplete(_, let p): return p
        }
    }

    var source: OperationSource {
        switch self {
        case .overwrite(let s, _, _), .merge(let s, _, _), .listenComplete(let s, _): return s
        case .ackUserWrite: return .user
        }
    }

    /// The same operation as seen from the child `key` of its location, if it reaches it.
    func forChild(_ key: String) -> Operation? {
        switch self {
        case let .overwrite(source, path, node):
            return path.isRoot ? .overwrite(source, .root, node.child(key)) : .overwrite(source, path.dropFirst(), node)
        case let .merge(source, path, children):
            guard path.isRoot else { return .merge(source, path.dropFirst(), children) }
            let child = children.subtree(Path(keys: [key]))
            if child.isEmpty { return nil }
            if let value = child.value { return .overwrite(source, .root, value) }
            return .merge(source, .root, child)
        case let .ackUserWrite(path, affected, revert):
            if !path.isRoot { return .ackUserWrite(path.dropFirst(), affected: affected, revert: revert) }
            if affected.value != nil { return self }
            return .ackUserWrite(.root, affected: affected.subtree(Path(keys: [key])), revert: revert)
        case let .listenComplete(source, path):
            return .listenComplete(source, path.isRoot ? .root : path.dropFirst())
        }
    }
}
