import RTDBData
import RTDBProtocol

/// `namespaces` and `use`: the server's other databases.
extension Shell {
    private func namespaceSwitch() throws -> NamespaceSwitch {
        guard let namespaces = options.namespaces else {
            throw ShellError("an embedded database has one namespace; namespaces and use work with a server (rtdb --url … or --emulator HOST:PORT)")
        }
        return namespaces
    }

    func listNamespaces(json: Bool) async throws {
        let namespaces = try namespaceSwitch()
        let names = try await namespaces.namespaces()
        if json {
            output.write(JSONValue.array(names.map { .string($0) }).serialized() + "\n")
            return
        }
        let current = namespaces.name
        // The one in use is listed even before its first write makes it.
        for name in Set(names + [current]).sorted() {
            output.write((name == current ? "* " : "  ") + name + "\n")
        }
    }

    /// Moves the session to namespace `name`: its connection first (a failure leaves the
    /// session where it was), then what the current one owes is settled (writes acknowledged
    /// or kept, background watches stopped), then it is closed.
    func use(_ name: String) async throws -> Outcome {
        let namespaces = try namespaceSwitch()
        if name == namespaces.name {
            output.writeError("already on namespace \(name)\n")
            return .ok
        }
        let next = try await namespaces.connect(to: name)
        // What this namespace owes first: writes not acknowledged (and not kept in the disk
        // cache) would be lost with its connection, so the session stays (as after Ctrl-C).
        let acknowledged = await finishWrites()
        if !acknowledged || Task.isCancelled {
            await next.close()
            throw ShellError("staying on namespace \(namespaces.name): its writes are not all acknowledged (see above); 'use \(name)' again once they are, or 'purge-writes' to drop them")
        }
        await stopBackgroundWatches()
        let rejected = reportRejectedWrites() > 0
        // The shell follows the new one before the old one closes: its end is no news.
        switchConnection(to: next)
        await namespaces.adopt(next, name: name)
        output.writeError("now on namespace \(name) (\(next.location))\n")
        try await carryCredential()
        return acknowledged && !rejected ? .ok : .failed
    }

    /// The credential chosen in this session (`auth`, `logout`) goes to the new namespace's
    /// connection too; otherwise it has the one the shell started with.
    private func carryCredential() async throws {
        guard let chosen = chosenCredential, let server = options.server else { return }
        server.userChoseCredential()
        switch chosen {
        case let .token(token, google, description):
            try await sendCredential(token, google: google)
            server.useCredential(token, google: google)
            options.credential = description
        case .none:
            await repo.unauthenticate()
            server.useCredential(nil, google: false)
            options.credential = "none"
        }
        await repo.setCacheSetting("credential", options.credential)
    }
}
