import RTDBClient
import RTDBData
import RTDBProtocol

/// `cp` and `mv`: one guarded update, or on a server that cannot guard one, a transaction.
extension Shell {
    func runCopy(_ request: CopyRequest, source: String?, lineNumber: Int) async throws {
        // Both read as get reads them (the server's value, this session's writes included):
        // the write is guarded by what they were then.
        let value = try await read(request.source)
        let existing = try await read(request.destination)
        let plan = try CopyPlan(request, value: value, existing: existing)
        // Before the first connection it is not known: the server checks when it gets it,
        // or if it cannot, the client does not send it (nothing is written).
        guard await repo.serverChecksGuards == false else {
            let write = try await repo.update(plan.base, plan.entries, guards: plan.guards)
            do {
                return try await finish(write, at: request.destination, source: source, line: lineNumber)
            } catch var error as ShellError where error.code == "DATASTALE" {
                // The server names the value that changed ("DATASTALE: the data at /a changed …").
                let why = error.message.hasPrefix("DATASTALE: ") ? String(error.message.dropFirst("DATASTALE: ".count)) : error.message
                error.message = "nothing was written: \(why); run it again to \(request.verb) what is there now"
                throw error
            }
        }
        try await copyByTransaction(request, plan)
    }

    /// Hosted Firebase and its emulator have no guarded update: a transaction at the plan's
    /// base checks the guards on the value it runs on, and aborts if either changed.
    private func copyByTransaction(_ request: CopyRequest, _ plan: CopyPlan) async throws {
        guard !plan.base.isRoot else {
            throw ShellError("this server has no guarded update (hosted Firebase and its emulator do not), and the \(request.verb) would be a transaction at /, which reads the whole database: \(request.verb) below a shared parent, or use get and set")
        }
        guard await repo.isConnected else {
            throw ShellError("offline: on this server \(request.verb) is a transaction at \(plan.base), which needs the connection")
        }
        let primed = try await primeCache(QuerySpec(path: plan.base))
        defer { Task { [repo] in await repo.unlisten(primed.0, primed.1) } }
        let done = await repo.startTransaction(plan.base) { current in
            if let stale = plan.guards.first(where: { current.child(at: $0.path).hashString != $0.hash }) {
                return .abort(plan.base.appending(stale.path).description)
            }
            return .commit(plan.applied(to: current))
        }
        let result = try await end(of: done)
        if !result.committed {
            throw ShellError("nothing was written: \(result.abortReason ?? "the data") changed since it was read; run it again to \(request.verb) what is there now")
        }
    }
}
