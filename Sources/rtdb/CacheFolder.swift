import Foundation
import RTDBClient
import RTDBProtocol
import RTDBShell

/// Where a server's database keeps its disk cache: one folder per server and namespace
/// under `$XDG_CACHE_HOME/rtdb` (`~/.cache/rtdb`), mode 0700.
enum CacheFolder {
    static func path(for address: ServerAddress) -> String {
        let base = ProcessEnvironment.nonEmpty("XDG_CACHE_HOME") ?? ProcessEnvironment.home + "/.cache"
        return base + "/rtdb/" + safeName("\(address.host):\(address.port)") + "/" + safeName(address.namespace)
    }

    /// A name that is one folder, never a way out of the cache's tree.
    private static func safeName(_ name: String) -> String {
        var cleaned = String(name.map { $0 == "/" || $0 == "\0" ? "_" : $0 })
        if cleaned.hasPrefix(".") { cleaned = "_" + cleaned.dropFirst() }
        return cleaned.isEmpty ? "_" : cleaned
    }

    /// Opens the cache for `address`; when it cannot be used, goes on without one and says
    /// why (for `status`). Another rtdb using it is said at a terminal only: parallel scripts
    /// against one database are common, and each would say it.
    static func open(for address: ServerAddress, limit: Int) -> (DiskCache?, why: String?) {
        let folder = path(for: address)
        do {
            let cache = try DiskCache(folder: folder, limit: limit)
            if let note = cache.openNote { warn(note) }
            return (cache, nil)
        } catch DiskCacheError.inUse(_, let pid) {
            let why = "another rtdb\(pid.map { " (pid \($0))" } ?? "") is using this database's cache"
            if isatty(STDERR_FILENO) == 1 { warn("\(why): this shell keeps none (its queued writes last as long as it does)") }
            return (nil, "off: " + why)
        } catch {
            warn("\(error): going on without a cache")
            return (nil, "off: \(error)")
        }
    }

    /// Says, once connected or not, what the cache brought back from an earlier session.
    static func reportRestored(_ database: RemoteDatabase) async {
        let repo = database.repo
        let restored = await repo.takeRestoredWrites()
        let unreadable = await repo.unreadableRestoredWrites
        func plural(_ n: Int) -> String { "\(n) queued write\(n == 1 ? "" : "s")" }
        if let failure = database.startedOffline {
            let writes = restored.isEmpty ? "" : ", with \(plural(restored.count)) restored"
            warn("offline: cannot reach \(database.location) (\(failure)); working from the cache\(writes); reconnecting")
        } else if !restored.isEmpty {
            warn("\(plural(restored.count)) from an earlier session restored from the cache and sent")
        }
        // The kind of credential, never the credential: writes queued signed in may be
        // refused by the rules when sent without it.
        let before = await repo.cacheSetting("credential")
        if let before, before != database.credential, !restored.isEmpty {
            warn("the restored writes were queued with the credential \(before); this shell has \(database.credential): the server's rules may refuse them")
        }
        await repo.setCacheSetting("credential", database.credential)
        if unreadable > 0 { warn("\(plural(unreadable)) in the cache could not be read and \(unreadable == 1 ? "was" : "were") left out") }
        for write in restored {
            write.whenAnswered { result in
                if case .failure(let error) = result, error.code != "DISCONNECTED", error.code != "WRITE_CANCELED" {
                    warn("a write restored from the cache was rejected: \(error)")
                }
            }
        }
    }
}
