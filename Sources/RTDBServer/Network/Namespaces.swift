import Foundation
import RTDBData

/// The databases of one server, one per namespace, each in its own folder under the data
/// folder, opened on first use.
public final class Namespaces: @unchecked Sendable {
    public let folder: String
    private let lock = NSLock()
    private var open: [String: Database] = [:]

    public init(folder: String) throws {
        self.folder = folder
        try FileIO.makeDirectories(folder)
    }

    /// Namespace names as Firebase allows them: letters, digits and dashes (underscores too).
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
        }
    }

    public func database(_ name: String) throws -> Database {
        guard Namespaces.isValid(name) else {
            throw StoreError.failed("invalid namespace \"\(name)\": use letters, digits, \"-\" and \"_\"")
        }
        lock.lock()
        defer { lock.unlock() }
        if let db = open[name] { return db }
        let db = try Database(folder: folder + "/" + name)
        open[name] = db
        return db
    }

    /// What a client is told when a namespace cannot be opened: the reason without the
    /// server's file names (those go to the server's log).
    static func clientMessage(for error: Error, namespace: String) -> String {
        switch error as? StoreError {
        case .failed(let message)?: return message
        case .corrupt?: return "the database \"\(namespace)\" is damaged and cannot be opened; the server's log says where (rtdb serve --recover salvages it)"
        default: return "the database \"\(namespace)\" cannot be opened; the server's log says why"
        }
    }

    /// Makes every write durable and releases every folder.
    public func closeAll() {
        lock.lock()
        let all = Array(open.values)
        open = [:]
        lock.unlock()
        for db in all { db.close() }
    }
}
