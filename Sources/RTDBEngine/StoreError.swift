import RTDBData
/// Why a data folder could not be opened or written.
public enum StoreError: Error, CustomStringConvertible, Equatable {
    case folderInUse(folder: String, pid: String?)
    case io(operation: String, path: String, errno: Int32)
    case corrupt(file: String, offset: Int, reason: String)
    /// Damage that `--recover` cannot work around (a head and its copy both damaged).
    case unsalvageable(file: String, offset: Int, reason: String)
    case failed(String)

    public var description: String {
        switch self {
        case let .folderInUse(folder, pid):
            let owner = pid.map { " (pid \($0))" } ?? ""
            return "the data folder \(folder) is in use by another rtdb process\(owner); stop it or choose another folder with --data"
        case let .io(operation, path, code):
            return "cannot \(operation) \(path): \(String(cString: strerror(code)))"
        case let .corrupt(file, offset, reason):
            return "\(file) is damaged at byte \(offset): \(reason). Nothing was changed; 'rtdb --data DIR --recover' (or 'rtdb serve --recover') keeps every record that can still be read"
        case let .unsalvageable(file, offset, reason):
            return "\(file) is damaged at byte \(offset): \(reason). Nothing was changed; --recover cannot rebuild this folder: restore it from a backup"
        case let .failed(message):
            return message
        }
    }
}

extension StoreError {
    /// What a client may be told: the same without file paths, which a server's clients
    /// must not learn.
    public var clientDescription: String {
        switch self {
        case .folderInUse: return "the data folder is in use by another rtdb process"
        case let .io(operation, _, code): return "cannot \(operation) the database's files: \(String(cString: strerror(code)))"
        case .corrupt, .unsalvageable: return "the database's files are damaged"
        case let .failed(message): return message
        }
    }

    init(_ failure: NodeFile.Failure) {
        switch failure {
        case let .io(operation, path, code): self = .io(operation: operation, path: path, errno: code)
        case let .damaged(path, offset, reason): self = .corrupt(file: path, offset: offset, reason: reason)
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
