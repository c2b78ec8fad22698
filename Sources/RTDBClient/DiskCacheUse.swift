/// How a listen uses the disk cache (when the client keeps one). One-time reads go to the
/// server with `g`; `keep` and `bypass` are their listens on servers without it.
enum DiskCacheUse: Sendable {
    /// Starts from what the cache holds, and keeps the server's data there: a watch shows
    /// the last known data at once (offline too), and the server's as it comes.
    case startFromAndKeep
    /// Waits for the server's data, and keeps it: a one-time read, whose answer must be the
    /// server's, not what an earlier session left in the cache.
    case keep
    /// Neither starts from the cache nor keeps anything there (filtered queries only): a
    /// one-time read whose data goes elsewhere (an export's pages).
    case bypass
}
