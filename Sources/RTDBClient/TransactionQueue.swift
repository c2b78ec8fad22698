import Dispatch
import RTDBData
import RTDBProtocol

// Follows the Firebase JS SDK's transactions (core/Repo.ts, repoStartTransaction and the
// functions after it).

/// A client's transactions, oldest first. Each runs its update function on the value the
/// client sees, shows the result at once as a user write (hidden when it must not be shown),
/// and sends it as a compare-and-set put carrying the hash of the value it read. A stale
/// answer runs it again on the fresh value, up to `maxRetries` sends.
///
/// Transactions at one location or nested below one another are sent together, as one put at
/// the root-most of their paths, and only when none of them is waiting for an answer: a
/// second transaction on a counter runs on the first one's result and goes after it.
///
/// Under contention (a stale answer at a place in the last second) a group waits a moment
/// before it is sent, shorter the more attempts it lost (`pause`): transactions that lost
/// reach the server before newer ones, so none loses all of its `maxRetries`. The official
/// clients send at once and, with a few busy writers on one counter, often end in
/// `maxretry`; nothing else differs.
///
/// Owned by the Repo and used only in its isolation, like the sync tree it writes into.
final class TransactionQueue {
    static let maxRetries = 25
    /// How long a stale answer marks its place as contended, in seconds.
    static let contentionMemory = 1.0
    /// Lost attempts after which a transaction no longer waits under contention.
    static let pacingSlots = 10

    enum Status {
        /// Computed; waiting to be sent.
        case run
        /// Sent; waiting for the answer.
        case sent
        /// Sent, and overridden meanwhile by a set: aborted unless the answer says committed.
        case sentNeedsAbort
        /// Failed; aborted at the next rerun.
        case needsAbort
        case completed
    }

    final class Entry {
        let order: Int
        let path: Path
        let update: @Sendable (Node) -> TransactionUpdate
        let applyLocally: Bool
        /// A listen at `path` while the transaction runs, so the value it reads stays fresh.
        let keepFresh = EventRegistration(types: [.value], callback: { _ in })
        let outcome: OneShot<TransactionResult>
        var status = Status.run
        var retryCount = 0
        var failure: DatabaseError?
        var writeID = -1
        /// When this attempt may be sent (contention), once decided; nil: not decided yet.
        var heldUntil: Double?
        var input = Node.empty
        var outputRaw = Node.empty
        var outputResolved = Node.empty

        init(order: Int, path: Path, applyLocally: Bool, update: @escaping @Sendable (Node) -> TransactionUpdate,
             outcome: OneShot<TransactionResult>) {
            self.order = order
            self.path = path
            self.applyLocally = applyLocally
            self.update = update
            self.outcome = outcome
        }
    }

    /// Not completed, oldest first.
    private(set) var entries: [Entry] = []
    private var nextOrder = 0

    private let syncTree: SyncTree
    private let send: (Request, @escaping (Response) -> Void) -> Void
    private let serverNow: () -> Double
    /// Set by the Repo: delivers events; hands out write ids shared with its other writes;
    /// calls `pauseEnded` with the given orders after a delay in seconds, in its isolation.
    var raise: ([Event]) -> Void = { _ in }
    var nextWriteID: () -> Int = { -1 }
    var wake: (_ after: Double, _ orders: [Int]) -> Void = { _, _ in }

    /// Where stale answers came lately (root of the group, monotonic seconds).
    private var staleAnswers: [Path: Double] = [:]
    /// Smoothed time from a compare-and-set put to its answer, in seconds.
    private var roundTrip = 0.002

    init(syncTree: SyncTree, send: @escaping (Request, @escaping (Response) -> Void) -> Void, serverNow: @escaping () -> Double) {
        self.syncTree = syncTree
        self.send = send
        self.serverNow = serverNow
    }

    /// Transactions not finished (those whose function gave up at once never count).
    var count: Int { entries.count }

    /// Starts a transaction: the first attempt runs now, on what the client has (empty when
    /// nothing is cached yet), and is sent as soon as the transactions before it allow.
    func start(_ path: Path, applyLocally: Bool, update: @escaping @Sendable (Node) -> TransactionUpdate,
               outcome: OneShot<TransactionResult>) {
        let entry = Entry(order: nextOrder, path: path, applyLocally: applyLocally, update: update, outcome: outcome)
        nextOrder += 1
        raise(syncTree.addRegistration(entry.keepFresh, for: QuerySpec(path: path)))
        let current = latestState(at: path, excluding: [])
        entry.input = current
        switch attempt(entry, on: current) {
        case .failure(let end):
            finish(entry, end)
        case .success(let output):
            entry.outputRaw = output.raw
            entry.outputResolved = output.resolved
            entry.writeID = nextWriteID()
            entries.append(entry)
            raise(syncTree.applyUserOverwrite(path, output.resolved, writeID: entry.writeID, visible: applyLocally))
            sendReady()
        }
    }

    // MARK: Attempts

    private struct Output {
        var raw: Node
        var resolved: Node
    }

    /// How a transaction ends without committing.
    private enum End: Error {
        /// The update function gave up: not committed, no error.
        case aborted(String?)
        case failed(DatabaseError)
    }

    /// Runs the update function once on `current`.
    private func attempt(_ entry: Entry, on current: Node) -> Result<Output, End> {
        switch entry.update(current) {
        case .abort(let reason):
            return .failure(.aborted(reason))
        case .commit(var value):
            do {
                try value.validate(at: entry.path)
            } catch {
                return .failure(.failed(DatabaseError(status: .invalidData, message: "\(error)")))
            }
            // As the official clients do: a result without a priority of its own keeps the current one.
            if value.priority == nil && !value.isEmpty, let priority = current.priority { value = value.withPriority(priority) }
            return .success(Output(raw: value, resolved: value.resolvingServerValues(now: serverNow(), existing: current)))
        }
    }

    /// What the client sees at `path` (server data, pending writes, running transactions),
    /// without the writes in `excluding`.
    private func latestState(at path: Path, excluding: Set<Int>) -> Node {
        syncTree.completeEventCache(at: path, excluding: excluding) ?? .empty
    }

    // MARK: Sending

    /// Sends every group of transactions none of which waits for an answer, unless
    /// contention holds it back a moment.
    private func sendReady() {
        let now = Self.monotonicNow()
        for (root, queue) in groups() where queue.allSatisfy({ $0.status == .run }) {
            if let held = queue.compactMap(\.heldUntil).max() {
                if held > now { continue }  // its timer sends it
            } else if let delay = pause(for: queue, at: root, now: now) {
                for entry in queue { entry.heldUntil = now + delay }
                wake(delay, queue.map(\.order))
                continue
            }
            sendGroup(queue, at: root)
        }
    }

    /// The pause of the transactions of `orders` is over: due now, whatever the clocks'
    /// rounding says, and sent if nothing else holds them.
    func pauseEnded(_ orders: [Int]) {
        let due = Set(orders)
        for entry in entries where due.contains(entry.order) && entry.heldUntil != nil { entry.heldUntil = 0 }
        sendReady()
    }

    /// How long a group waits before it is sent: nothing when no stale answer came lately at
    /// or around `root`. Else the contention window (four round trips) is cut into slots,
    /// and a group that lost `n` attempts waits `pacingSlots - n` of them plus a random part
    /// of one: the more it lost, the sooner it goes, by a margin wider than the jitter of a
    /// busy machine; equals are ordered by chance.
    private func pause(for queue: [Entry], at root: Path, now: Double) -> Double? {
        staleAnswers = staleAnswers.filter { now - $0.value < Self.contentionMemory }
        guard staleAnswers.keys.contains(where: { $0.overlaps(root) }) else { return nil }
        let lost = queue.map(\.retryCount).max() ?? 0
        let slot = min(max(4 * roundTrip, 0.0005), 0.25) / Double(Self.pacingSlots)
        return Double(max(0, Self.pacingSlots - lost)) * slot + Double.random(in: 0..<slot)
    }

    static func monotonicNow() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    /// The transactions grouped under the root-most paths (a path with no transaction above
    /// it), each group oldest first.
    private func groups() -> [(Path, [Entry])] {
        let roots = Self.rootMost(Set(entries.map(\.path)))
        var byRoot: [Path: [Entry]] = [:]
        for entry in entries {
            var path = entry.path
            while !roots.contains(path), let parent = path.parent { path = parent }
            byRoot[path, default: []].append(entry)
        }
        return byRoot.sorted { $0.key < $1.key }
    }

    /// The paths in `paths` that have no other one above them.
    private static func rootMost(_ paths: Set<Path>) -> Set<Path> {
        var roots: Set<Path> = []
        var last: Path?
        // In key order a path's descendants follow it at once.
        for path in paths.sorted(by: { $0.keys.lexicographicallyPrecedes($1.keys) }) {
            if let last, last.contains(path) { continue }
            roots.insert(path)
            last = path
        }
        return roots
    }

    private func sendGroup(_ queue: [Entry], at path: Path) {
        let latest = latestState(at: path, excluding: Set(queue.map(\.writeID)))
        var value = latest
        for entry in queue {
            entry.status = .sent
            entry.retryCount += 1
            entry.heldUntil = nil
            value = value.setting(entry.path.relative(to: path) ?? .root, to: entry.outputRaw)
        }
        let sent = Self.monotonicNow()
        send(.put(path: path, data: value, hash: latest.hashString)) { [weak self] response in
            self?.answered(queue, at: path, response, sent: sent)
        }
    }

    private func answered(_ queue: [Entry], at path: Path, _ response: Response, sent: Double) {
        let now = Self.monotonicNow()
        if response.status != .disconnected { roundTrip += (now - sent - roundTrip) / 8 }
        if response.status == .dataStale { staleAnswers[path] = now }
        if response.isOK {
            var events: [Event] = []
            for entry in queue {
                entry.status = .completed
                events += syncTree.ackUserWrite(entry.writeID)
            }
            entries.removeAll { $0.status == .completed }
            raise(events)
            for entry in queue {
                stopKeepingFresh(entry)
                entry.outcome.resolve(.success(TransactionResult(committed: true, snapshot: entry.outputResolved,
                                                                 abortReason: nil, attempts: entry.retryCount)))
            }
            sendReady()
            return
        }
        for entry in queue {
            if response.status == .dataStale {
                entry.status = entry.status == .sentNeedsAbort ? .needsAbort : .run
            } else {
                entry.status = .needsAbort
                if response.status == .disconnected {
                    entry.failure = .transactionDisconnected
                } else {
                    entry.failure = DatabaseError(status: response.status, message: response.message)
                }
            }
        }
        rerun(at: path)
    }

    // MARK: Reruns and aborts

    /// The data at `changedPath` changed (new server data, an overriding write, a stale
    /// answer): the transactions there that are not waiting for an answer run again (or end,
    /// when they must), then whatever is ready is sent. With `onlyIfChanged` (server data),
    /// a transaction whose input is what it read last time keeps its result. Returns the
    /// path of the group rerun.
    @discardableResult
    func rerun(at changedPath: Path, onlyIfChanged: Bool = false) -> Path {
        guard !entries.isEmpty else { return changedPath }
        let root = entries.filter { $0.path.contains(changedPath) }.min { $0.path.count < $1.path.count }?.path ?? changedPath
        let queue = entries.filter { root.contains($0.path) }
        // Only the ones rerun read past their own results; those sent stay in what they read.
        var excluded = Set(queue.filter { $0.status == .run }.map(\.writeID))
        for entry in queue {
            switch entry.status {
            case .needsAbort:
                raise(syncTree.ackUserWrite(entry.writeID, revert: true))
                finish(entry, .failed(entry.failure ?? .transactionOverridden))
            case .run where entry.retryCount >= Self.maxRetries:
                raise(syncTree.ackUserWrite(entry.writeID, revert: true))
                finish(entry, .failed(.transactionMaxRetry))
            case .run:
                let current = latestState(at: entry.path, excluding: excluded)
                if onlyIfChanged && current == entry.input {
                    excluded.remove(entry.writeID)  // later ones read its result
                    continue
                }
                entry.input = current
                switch attempt(entry, on: current) {
                case .success(let output):
                    let previous = entry.writeID
                    entry.writeID = nextWriteID()
                    entry.outputRaw = output.raw
                    entry.outputResolved = output.resolved
                    // Later transactions in the group run on this one's new result.
                    excluded.remove(previous)
                    raise(syncTree.applyUserOverwrite(entry.path, output.resolved, writeID: entry.writeID, visible: entry.applyLocally))
                    raise(syncTree.ackUserWrite(previous, revert: true))
                case .failure(let end):
                    raise(syncTree.ackUserWrite(entry.writeID, revert: true))
                    finish(entry, end)
                }
            case .sent, .sentNeedsAbort, .completed:
                break
            }
        }
        entries.removeAll { $0.status == .completed }
        sendReady()
        return root
    }

    /// A user's `set` or `update` at `path` overrides the transactions at, above and below
    /// it: those waiting to be sent end now, those sent end unless their answer is a commit.
    /// Returns the path to rerun from.
    func abort(overlapping path: Path) -> Path {
        guard !entries.isEmpty else { return path }
        let root = entries.filter { $0.path.contains(path) }.min { $0.path.count < $1.path.count }?.path ?? path
        var events: [Event] = []
        var ended: [Entry] = []
        for entry in entries where entry.path.overlaps(path) {
            switch entry.status {
            case .sent:
                entry.status = .sentNeedsAbort
                entry.failure = .transactionOverridden
            case .run:
                entry.status = .completed
                events += syncTree.ackUserWrite(entry.writeID, revert: true)
                ended.append(entry)
            case .sentNeedsAbort, .needsAbort, .completed:
                break
            }
        }
        entries.removeAll { $0.status == .completed }
        raise(events)
        for entry in ended {
            entry.input = .empty
            finish(entry, .failed(.transactionOverridden))
        }
        return root
    }

    private func finish(_ entry: Entry, _ end: End) {
        entry.status = .completed
        stopKeepingFresh(entry)
        switch end {
        case .aborted(let reason):
            entry.outcome.resolve(.success(TransactionResult(committed: false, snapshot: entry.input, abortReason: reason,
                                                             attempts: entry.retryCount)))
        case .failed(let error):
            entry.outcome.resolve(.failure(error))
        }
    }

    private func stopKeepingFresh(_ entry: Entry) {
        for (registration, error) in syncTree.removeRegistration(entry.keepFresh, for: QuerySpec(path: entry.path)) {
            registration.cancel(error)
        }
    }
}
