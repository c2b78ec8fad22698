import RTDBData
import RTDBProtocol

/// One write of an import: the whole target (the first write of a replacing import, or the
/// only one when the file fits in a write), an update below it, or a priority set apart.
enum ImportWrite {
    case set(Path, Node)
    case update(Path, [UpdateEntry])

    var path: Path {
        switch self {
        case .set(let path, _), .update(let path, _): return path
        }
    }
}
