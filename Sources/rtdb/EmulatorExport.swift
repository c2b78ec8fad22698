import Foundation
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBServer

/// The folder `firebase emulators:export` writes and `firebase emulators:start --import` reads:
/// `firebase-export-metadata.json`, whose `database.path` names the database's folder
/// (`database_export`), and in that folder one `NS.json` per namespace, in the export format
/// (priorities as `.priority`). `rtdb serve --import` loads one before it listens, and
/// `--export-on-exit` writes one after its last write, so a project's seed data and scripts
/// keep working.
struct EmulatorExport {
    let folder: String

    static let metadataName = "firebase-export-metadata.json"
    static let databaseFolder = "database_export"

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The namespaces of the export and their data, every file read and checked before any
    /// is loaded, so a bad file loads nothing.
    func read() throws(Failure) -> [(namespace: String, data: Node)] {
        // An export of other emulators only has nothing for the database.
        guard let databaseFolder = try databasePath() else { return [] }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: databaseFolder) } catch {
            throw Failure(description: "\(databaseFolder): cannot list the folder: \(error.localizedDescription)")
        }
        var loaded: [(String, Node)] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            let namespace = String(name.dropLast(".json".count))
            let file = databaseFolder + "/" + name
            guard NamespaceName.isValid(namespace) else {
                throw Failure(description: "\(file): \"\(namespace)\" is not a namespace name (letters, digits, \"-\" and \"_\")")
            }
            guard let bytes = FileManager.default.contents(atPath: file).map(Array.init) else {
                throw Failure(description: "\(file): cannot be read")
            }
            do {
                loaded.append((namespace, try JSONReader.parse(data: bytes, options: .init(allowServerValues: false))))
            } catch let error as JSONParseError {
                let (line, column) = error.lineAndColumn(in: bytes)
                throw Failure(description: "\(file):\(line):\(column): \(error.message)")
            } catch {
                throw Failure(description: "\(file): \(error)")
            }
        }
        return loaded
    }

    /// The database's folder as the metadata names it (nil when it names none); `database_export`
    /// when there is no metadata (a folder made by hand).
    private func databasePath() throws(Failure) -> String? {
        let metadataFile = folder + "/" + Self.metadataName
        guard let bytes = FileManager.default.contents(atPath: metadataFile) else {
            let fallback = folder + "/" + Self.databaseFolder
            guard FileManager.default.fileExists(atPath: fallback) else {
                throw Failure(description: "\(folder) holds no emulator export: neither \(Self.metadataName) nor \(Self.databaseFolder)/")
            }
            return fallback
        }
        let metadata: JSONValue
        do { metadata = try JSONValue.parse(String(decoding: bytes, as: UTF8.self)) } catch {
            throw Failure(description: "\(metadataFile): not JSON: \(error)")
        }
        guard let database = metadata["database"] else { return nil }
        guard let path = database["path"]?.string, !path.isEmpty, !path.hasPrefix("/"), !path.split(separator: "/").contains("..") else {
            throw Failure(description: "\(metadataFile): \"database\".\"path\" must name a folder inside \(folder)")
        }
        return folder + "/" + path
    }

    /// Writes `data` (a namespace's tree each) as an export: each namespace's file, then the
    /// metadata, each whole or not at all. Other emulators' entries in the metadata are kept.
    func write(_ data: [(namespace: String, data: Node)], version: String) throws(Failure) {
        let databaseFolder = folder + "/" + Self.databaseFolder
        do {
            try FileManager.default.createDirectory(atPath: databaseFolder, withIntermediateDirectories: true)
            for (namespace, tree) in data {
                try Self.writeWhole(databaseFolder + "/" + namespace + ".json", JSONWriter.bytes(tree, options: .init(export: true)))
            }
            // A namespace an earlier export held and this one does not would come back with
            // the next import.
            let written = Set(data.map { $0.namespace + ".json" })
            for name in try FileManager.default.contentsOfDirectory(atPath: databaseFolder) where name.hasSuffix(".json") && !written.contains(name) {
                try FileManager.default.removeItem(atPath: databaseFolder + "/" + name)
            }
            let metadataFile = folder + "/" + Self.metadataName
            var entries: [(String, JSONValue)] = []
            if let bytes = FileManager.default.contents(atPath: metadataFile),
               let members = (try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)))?.members {
                entries = members.filter { $0.0 != "database" && $0.0 != "version" }
            }
            let database = JSONValue.object([("version", .string(version)), ("path", .string(Self.databaseFolder))])
            let metadata = JSONValue.object([("version", .string(version))] + entries + [("database", database)])
            try Self.writeWhole(metadataFile, Array((metadata.serialized() + "\n").utf8))
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "cannot write the export in \(folder): \(error.localizedDescription)")
        }
    }

    /// A temporary file beside `path`, renamed over it once written.
    private static func writeWhole(_ path: String, _ bytes: [UInt8]) throws {
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else {
            throw Failure(description: "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(description: "cannot rename \(temporary) to \(path): \(reason)")
        }
    }
}
