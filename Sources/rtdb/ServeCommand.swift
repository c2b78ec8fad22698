import ArgumentParser
#if canImport(CMimalloc)
import CMimalloc
#endif
import Foundation
import NIOSSL
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBRules
import RTDBServer
import RTDBShell
import Synchronization

/// `rtdb serve`: the local server, with the engine behind the realtime protocol and REST.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the local server: the realtime protocol over WebSocket and the REST API, one database per namespace.",
        // Written out: with every option it is too long, and would shrink to "<options>".
        usage: "rtdb serve [--host <ADDRESS>] [--port <PORT>] [--data <DIR>] [--rules <FILE>] [<options>]",
        helpNames: [.short, .long])

    @Option(help: ProgramOption.argumentHelp("--host", in: ProgramOption.serve))
    var host = "127.0.0.1"

    @Option(help: ProgramOption.argumentHelp("--port", in: ProgramOption.serve))
    var port = 9000

    @Option(help: ProgramOption.argumentHelp("--data", in: ProgramOption.serve))
    var data: String?

    @Option(name: .customLong("tls-cert"), help: ProgramOption.argumentHelp("--tls-cert", in: ProgramOption.serve))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ProgramOption.argumentHelp("--tls-key", in: ProgramOption.serve))
    var tlsKey: String?

    @Option(name: .customLong("allow-origin"), help: ProgramOption.argumentHelp("--allow-origin", in: ProgramOption.serve))
    var allowedOrigins: [String] = []

    @Option(name: .customLong("allow-host"), help: ProgramOption.argumentHelp("--allow-host", in: ProgramOption.serve))
    var allowedHosts: [String] = []

    @Option(name: .customLong("request-timeout"), help: ProgramOption.argumentHelp("--request-timeout", in: ProgramOption.serve))
    var requestTimeout = 30

    @Option(help: ProgramOption.argumentHelp("--rules", in: ProgramOption.serve))
    var rules: String?

    @Option(name: .customLong("import"), help: ProgramOption.argumentHelp("--import", in: ProgramOption.serve))
    var importFolder: String?

    @Option(name: .customLong("export-on-exit"), help: ProgramOption.argumentHelp("--export-on-exit", in: ProgramOption.serve))
    var exportFolder: String?

    @Flag(name: .customLong("log-rules"), help: ProgramOption.argumentHelp("--log-rules", in: ProgramOption.serve))
    var logRules = false

    @Flag(help: ProgramOption.argumentHelp("--recover", in: ProgramOption.serve))
    var recover = false

    @Flag(name: .customLong("no-viewer"), help: ProgramOption.argumentHelp("--no-viewer", in: ProgramOption.serve))
    var noViewer = false

    func validate() throws {
        guard (0...65535).contains(port) else {
            throw ValidationError("--port must be between 0 and 65535 (0 picks a free port), not \(port)")
        }
        guard (1...3600).contains(requestTimeout) else {
            throw ValidationError("--request-timeout must be between 1 and 3600 seconds, not \(requestTimeout)")
        }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
    }
}

extension ServeCommand {
    func run() throws {
        throw ExitCode(serve().rawValue)
    }

    /// Serves until SIGINT or SIGTERM.
    private func serve() -> ExitStatus {
        let folder = data.map { ($0 as NSString).expandingTildeInPath } ?? EmbeddedDatabase.defaultServerFolder
        if recover {
            return Recover.run(folders: Namespaces.stored(in: folder).map { folder + "/" + $0 })
        }
        let log: @Sendable (String) -> Void = { line in
            let stamp = ISO8601DateFormatter().string(from: Date())
            FileHandle.standardError.write(Data("\(stamp) \(line)\n".utf8))
        }
        var securityRules = SecurityRules.open
        if let rules {
            do {
                let text = try String(contentsOfFile: (rules as NSString).expandingTildeInPath, encoding: .utf8)
                securityRules = try SecurityRules(parsing: text)
            } catch let error as RulesError {
                FileHandle.standardError.write(Data("rtdb serve: \(rules):\(error.line):\(error.column): \(error.message)\n".utf8))
                return .usage
            } catch {
                FileHandle.standardError.write(Data("rtdb serve: cannot read the rules in \(rules): \(error.localizedDescription)\n".utf8))
                return .usage
            }
        }
        var tls: NIOSSLContext?
        if let certificate = tlsCertificate, let key = tlsKey {
            do {
                tls = try NetworkServer.tlsContext(certificateFile: certificate, keyFile: key)
            } catch {
                let reason: String
                switch error as? NIOSSLError {
                case .failedToLoadCertificate?: reason = "\(certificate) holds no PEM certificate"
                case .failedToLoadPrivateKey?: reason = "\(key) holds no PEM private key"
                default: reason = "\(error)"
                }
                FileHandle.standardError.write(Data("rtdb serve: cannot use --tls-cert \(certificate) with --tls-key \(key): \(reason)\n".utf8))
                return .unavailable
            }
        }
        var imported: [String] = []
        if let importFolder {
            do { imported = try importExport(from: (importFolder as NSString).expandingTildeInPath, into: folder) } catch {
                FileHandle.standardError.write(Data("rtdb serve: --import: \(error)\n".utf8))
                return .commandFailed
            }
        }
        let exportTo = exportFolder.map { ($0 as NSString).expandingTildeInPath }
        if let exportTo {
            // Made now, so a folder that cannot be written is said at start, not lost at exit.
            do { try FileManager.default.createDirectory(atPath: exportTo, withIntermediateDirectories: true) } catch {
                FileHandle.standardError.write(Data("rtdb serve: --export-on-exit: cannot make \(exportTo): \(error.localizedDescription)\n".utf8))
                return .usage
            }
        }
        raiseDescriptorLimit()
        // Timers and signal sources first: Dispatch opens its event descriptor on first use,
        // and must not find the descriptors used up by clients.
        let trim = returnFreedMemory()
        // Shut down cleanly on SIGINT and SIGTERM: stop accepting, then make writes durable.
        let done = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { done.signal() }
            source.resume()
            sources.append(source)
        }
        let policy = AccessPolicy(listenHost: host, allowedHosts: allowedHosts, allowedOrigins: allowedOrigins)
        let server: NetworkServer
        let boundPort: Int
        do {
            // Refusals explained to clients only where no other machine can reach the server: a
            // trace may show data the rules read.
            let explanations = RuleExplanations(toClients: AccessPolicy.isLoopback(listenHost: host), log: logRules ? log : nil)
            server = NetworkServer(namespaces: try Namespaces(folder: folder, rules: securityRules, explanations: explanations), policy: policy,
                                   requestTimeout: .seconds(Int64(requestTimeout)), viewer: !noViewer, log: log)
            boundPort = try server.start(host: host, port: port, tls: tls)
        } catch {
            FileHandle.standardError.write(Data("rtdb serve: cannot listen on \(host):\(port): \(error)\n".utf8))
            return .unavailable
        }
        let (ws, http) = tls == nil ? ("ws", "http") : ("wss", "https")
        print("rtdb serve: listening on \(host):\(boundPort) (\(ws)://\(host):\(boundPort)/.ws?ns=NAME, \(http)://\(host):\(boundPort)/PATH.json?ns=NAME); data in \(folder)")
        if !noViewer {
            // At an address a browser can open, and this server shows the viewer at.
            let reachable = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
            let shown = reachable.contains(":") ? "[\(reachable)]" : reachable
            print("rtdb serve: the data viewer is at \(http)://\(shown):\(boundPort)/ (--no-viewer turns it off)")
        }
        fflush(nil)
        if rules == nil {
            let reach = AccessPolicy.isLoopback(listenHost: host) ? "anyone on this machine" : "anyone who can reach \(host)"
            FileHandle.standardError.write(Data("rtdb serve: warning: no --rules: \(reach) can read and write every database\n".utf8))
        } else if !AccessPolicy.isLoopback(listenHost: host) {
            // As the emulator: tokens are believed, not verified, and "owner" is the admin.
            FileHandle.standardError.write(Data("rtdb serve: warning: listening on \(host), beyond this machine: credentials are not verified (\"owner\" is the admin, any well-formed token is believed), so the rules do not protect the data from anyone who can reach it\n".utf8))
        }
        withExtendedLifetime((sources, trim)) { done.wait() }
        log("shutting down")
        server.shutdown()
        log("stopped; every acknowledged write is on disk")
        if let exportTo {
            do {
                let count = try exportData(of: folder, to: exportTo, including: imported)
                log("exported \(count) namespace\(count == 1 ? "" : "s") to \(exportTo)")
            } catch {
                FileHandle.standardError.write(Data("rtdb serve: --export-on-exit: \(error)\n".utf8))
                return .commandFailed
            }
        }
        return .success
    }

    /// Loads an emulator export into the namespaces' folders (before any client can connect),
    /// each durable before the next; returns the namespaces loaded.
    private func importExport(from source: String, into folder: String) throws -> [String] {
        let export = try EmulatorExport(folder: source).read()
        for (namespace, data) in export {
            let database = try Database(folder: folder + "/" + namespace)
            defer { database.close() }
            let written = DispatchSemaphore(value: 0)
            let outcome = Mutex<Response?>(nil)
            database.write(.root, data) { response in
                outcome.withLock { $0 = response }
                written.signal()
            }
            written.wait()
            if let response = outcome.withLock({ $0 }), !response.isOK {
                throw EmulatorExport.Failure(description: "namespace \(namespace): \(response.message)")
            }
        }
        let names = export.map(\.namespace)
        FileHandle.standardError.write(Data("rtdb serve: imported \(names.count) namespace\(names.count == 1 ? "" : "s") from \(source)\(names.isEmpty ? "" : ": " + names.joined(separator: ", "))\n".utf8))
        return names
    }

    /// Writes every namespace that holds data (and those imported, even if emptied since) as
    /// an emulator export; returns how many. The server has stopped: each folder is free.
    private func exportData(of folder: String, to destination: String, including imported: [String]) throws -> Int {
        var data: [(namespace: String, data: Node)] = []
        for namespace in Namespaces.stored(in: folder) {
            let database = try Database(folder: folder + "/" + namespace)
            let root = database.value(at: .root)
            database.close()
            if !root.isEmpty || imported.contains(namespace) { data.append((namespace, root)) }
        }
        try EmulatorExport(folder: destination).write(data, version: Version.number)
        return data.count
    }
}

/// Memory freed by closed connections goes back to the system, not only to the allocator's
/// free lists (a disconnected slow reader may have held 32 MiB). The timer it returns (nil
/// without mimalloc) must be kept.
private func returnFreedMemory() -> DispatchSourceTimer? {
    #if canImport(CMimalloc)
    // mimalloc returns a free stretch of a thread's memory after a delay, and only when that
    // thread allocates again: a server's threads may then idle for hours. Without the delay, a
    // stretch goes back as it becomes free (on a thread's own frees, or when it next takes in
    // what others freed), for a little CPU on each large free.
    rtdb_mi_return_memory_at_once()
    // And every 10 s, what the timer's thread holds and what threads that have ended
    // (Dispatch's come and go) left behind.
    let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
    timer.schedule(deadline: .now() + 10, repeating: 10)
    timer.setEventHandler { mi_collect(true) }
    timer.resume()
    return timer
    #else
    return nil
    #endif
}

/// Many clients need many descriptors: take the most the system allows this process.
private func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
}
