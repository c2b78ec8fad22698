import Foundation
import RTDBData
import RTDBProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The names of a database's snapshots (`snapshots/NAMES`, JSON, replaced whole and durably):
/// each names the file of one `SnapshotFile`, when it was saved and its size. A name saved
/// again names a new file; a file no name holds is removed when the database next opens and
/// no log refers to it.
struct SnapshotCatalog: Equatable {
    struct Entry: Equatable {
        var id: Int
        /// When it was saved, in milliseconds since the epoch.
        var saved: Double
        var bytes: Int
    }

    var entries: [String: Entry] = [:]

    static func path(in folder: String) -> String { folder + "/" + SnapshotFile.folderName + "/NAMES" }

    /// The catalog of `folder`; empty when it has none.
    static func read(in folder: String) throws -> SnapshotCatalog {
        let path = path(in: folder)
        guard FileManager.default.fileExists(atPath: path) else { return SnapshotCatalog() }
        let bytes = try FileIO.readFile(path)
        guard case .object(let members)? = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)) else {
            throw StoreError.corrupt(file: path, offset: 0, reason: "not a JSON object of snapshot names")
        }
        var catalog = SnapshotCatalog()
        for (name, entry) in members {
            guard SnapshotInfo.isValid(name), let id = entry["id"]?.int, id > 0, id <= SnapshotFile.maximumID, let saved = entry["saved"]?.number, let size = entry["bytes"]?.int else {
                throw StoreError.corrupt(file: path, offset: 0, reason: "the entry of \"\(name)\" is not {\"id\", \"saved\", \"bytes\"}")
            }
            catalog.entries[name] = Entry(id: id, saved: saved, bytes: size)
        }
        return catalog
    }

    /// Replaces the catalog on disk, whole.
    func write(in folder: String) throws {
        let json = JSONValue.object(entries.sorted { $0.key < $1.key }.map { name, entry in
            (name, .object([("id", .number(Double(entry.id))), ("saved", .number(entry.saved)), ("bytes", .number(Double(entry.bytes)))]))
        })
        try Store.writeFile(SnapshotCatalog.path(in: folder), Array((json.serialized() + "\n").utf8))
        try FileIO.syncDirectory(folder + "/" + SnapshotFile.folderName)
    }

    /// The number for the next snapshot file: past every one named or on disk.
    static func nextID(in folder: String, catalog: SnapshotCatalog) throws -> Int {
        let directory = folder + "/" + SnapshotFile.folderName
        let files = access(directory, F_OK) == 0 ? try FileIO.listDirectory(directory) : []
        let onDisk = files.compactMap(SnapshotFile.id(ofFile:))
        return (onDisk + catalog.entries.values.map(\.id)).max().map { $0 + 1 } ?? 1
    }
}
