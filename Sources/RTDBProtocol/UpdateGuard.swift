import RTDBData

/// A condition of a guarded multi-path update: the value at `path` (relative to the
/// update's location) must still hash to `hash` (`Node.hashString`; "" for nothing there),
/// or nothing of the update is written and the server answers `datastale`. rtdb's servers
/// take these (`"h"` beside an `m` request's `"d"`, an object of relative path → hash) and
/// say so in their handshake (`Handshake.guardedMerge`); Firebase's protocol has only the
/// single-path compare-and-set of `p`.
public struct UpdateGuard: Sendable, Equatable {
    /// The most guards one update may carry: each costs the server a hash of its value.
    public static let maximumCount = 16

    public var path: Path
    public var hash: String
    public init(_ path: Path, hash: String) { self.path = path; self.hash = hash }
}
