import Foundation
import Synchronization

/// Reads the branches of a query index stored in a node file (`NodeFile.storedIndex`).
///
/// An index is derived data: a damaged record reads as a stand-in entry (its key names the
/// offset, as a damaged child's does) and marks the whole index damaged, so its owner builds
/// it again from the children rather than answer from it.
public final class StoredIndexBranches: BranchLoader, Sendable {
    let file: NodeFile
    private let damaged = Atomic(false)

    init(file: NodeFile) { self.file = file }

    /// Whether a record of this index failed its checks when it was read.
    public var isDamaged: Bool { damaged.load(ordering: .relaxed) }

    func loadBranch(at offset: Int, size: Int) -> WeightBalancedTree<IndexEntry>.Branch {
        switch file.readIndexBranch(at: offset, size: size, loader: self) {
        case .success(let branch): return branch
        case .failure(let damage):
            if !damaged.exchange(true, ordering: .relaxed) { file.onDamage("\(file.path) is damaged at byte \(offset): \(damage.reason); the query index stored there is built again from the data") }
            return WeightBalancedTree<IndexEntry>.Branch(IndexEntry(value: .empty, key: ChildKey(NodeFile.standInKey(offset))), nil, nil)
        }
    }

    func sameStorage(as other: any BranchLoader<IndexEntry>) -> Bool {
        guard let other = other as? StoredIndexBranches else { return false }
        return other === self || (other.file.id == file.id && other.file.path == file.path)
    }
}
