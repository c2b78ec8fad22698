/// What a client's disk cache holds, for `status`.
public struct CacheSummary: Sendable {
    public let folder: String
    /// Bytes of cached server data.
    public let dataBytes: Int
    /// Past this, the least recently used data is evicted.
    public let limit: Int
    /// Writes kept on disk until the server acknowledges them.
    public let queuedWrites: Int
    /// The first error the cache met, if any.
    public let failure: String?
}
