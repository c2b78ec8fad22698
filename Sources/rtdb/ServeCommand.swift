import ArgumentParser
#if canImport(CMimalloc)
import CMimalloc
#endif
import Foundation
import NIOSSL
import RTDBRules
import RTDBServer
import RTDBShell

/// `rtdb serve`: the local server, with the engine behind the realtime protocol and REST.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the local server: the realtime protocol over WebSocket and the REST API, one database per namespace.",
        helpNames: [.short, .long])

    @Option(help: "The address to listen on. Anything but 127.0.0.1 exposes the database to the network.")
    var host = "127.0.0.1"

    @Option(help: "The port: the realtime protocol at /.ws and the REST API at /PATH.json.")
    var port = 9000

    @Option(help: ArgumentHelp("The folder holding one database per namespace.", valueName: "DIR"))
    var data: String?

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("Serve TLS (wss://, https://) with this PEM certificate chain.", valueName: "FILE"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "FILE"))
    var tlsKey: String?

    @Option(name: .customLong("allow-origin"), help: ArgumentHelp("Also serve web pages from this origin (repeatable; '*' for any). Pages served from localhost or 127.0.0.1 are always allowed.", valueName: "ORIGIN"))
    var allowedOrigins: [String] = []

    @Option(name: .customLong("allow-host"), help: ArgumentHelp("Also answer requests whose Host header names this host (repeatable; '*' for any). IP addresses and localhost are always answered.", valueName: "NAME"))
    var allowedHosts: [String] = []

    @Option(name: .customLong("request-timeout"), help: ArgumentHelp("Seconds a client may take to send a request's head, or pause within its body; an idle keep-alive connection is closed after twice this.", valueName: "SECONDS"))
    var requestTimeout = 30

    @Option(help: ArgumentHelp("Security rules for every namespace: a JSON file ({\"rules\": {…}}, comments allowed). Without it, everyone may read and write everything. The owner replaces a namespace's rules at run time with PUT /.settings/rules.json or the shell's 'rules set'.", valueName: "FILE"))
    var rules: String?

    @Flag(help: "Salvage every damaged database in the data folder (keep what can be read, move the damaged files aside, say what was lost), then exit.")
    var recover = false

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
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            let folders = names.filter { Namespaces.isValid($0) }.map { folder + "/" + $0 }
            return Recover.run(folders: folders)
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
            server = NetworkServer(namespaces: try Namespaces(folder: folder, rules: securityRules), policy: policy,
                                   requestTimeout: .seconds(Int64(requestTimeout)), log: log)
            boundPort = try server.start(host: host, port: port, tls: tls)
        } catch {
            FileHandle.standardError.write(Data("rtdb serve: cannot listen on \(host):\(port): \(error)\n".utf8))
            return .unavailable
        }
        let (ws, http) = tls == nil ? ("ws", "http") : ("wss", "https")
        print("rtdb serve: listening on \(host):\(boundPort) (\(ws)://\(host):\(boundPort)/.ws?ns=NAME, \(http)://\(host):\(boundPort)/PATH.json?ns=NAME); data in \(folder)")
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
        return .success
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
