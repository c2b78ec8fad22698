import Foundation
import RTDBData
import RTDBProtocol

/// `snapshot`: the whole tree saved under a name, and put back in one atomic write.
extension Shell {
    func snapshot(_ action: SnapshotAction, json: Bool) async throws {
        guard let keeper = options.snapshots else { throw ShellError("this database keeps no snapshots") }
        do {
            switch action {
            case .list:
                let list = try await keeper.snapshots()
                if json {
                    output.write(SnapshotInfo.json(list).serialized() + "\n")
                } else {
                    output.write(Self.describe(list))
                }
            case .save(let name):
                try await writesAcknowledged(before: "saved")
                let saved = try await keeper.saveSnapshot(name)
                output.writeError("saved snapshot \(name) (\(Outline.humanBytes(saved.bytes)))\n")
            case .restore(let name):
                try await writesAcknowledged(before: "restored")
                try await keeper.restoreSnapshot(name)
                output.writeError("restored snapshot \(name)\n")
            case .remove(let name):
                guard try await keeper.removeSnapshot(name) else { throw ShellError("there is no snapshot named \(name)") }
                output.writeError("removed snapshot \(name)\n")
            }
        } catch let error as ShellError {
            throw error
        } catch {
            throw ShellError("\(error)")
        }
    }

    /// One line per snapshot: its name, when it was saved (local time) and its size.
    nonisolated static func describe(_ list: [SnapshotInfo]) -> String {
        guard !list.isEmpty else { return "no snapshots\n" }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let width = list.map(\.name.count).max() ?? 0
        return list.map { snapshot in
            let saved = formatter.string(from: Date(timeIntervalSince1970: snapshot.saved / 1000))
            return snapshot.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + saved + "  " + Outline.humanBytes(snapshot.bytes) + "\n"
        }.joined()
    }
}
