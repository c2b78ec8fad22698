/// How a listen uses the disk cache (when the client keeps one).
public enum DiskCacheUse: Sendable {
    /// Starts from what the cache holds, and keeps the server's data there: a watch shows
    /// the last known data at once (offline too), and the server's as it comes.
    case startFromAndKeep
    /// Waits for the server's data, and keeps it: a one-time read while online, whose answer
    /// must be the server's, not what an earlier session left in the cache.
    case keep
    /// Neither starts from the cache nor keeps anything there (filtered queries only): data
    /// that goes elsewhere, such as an export's pages, which evicted what was read and watched.
    case bypass
}
