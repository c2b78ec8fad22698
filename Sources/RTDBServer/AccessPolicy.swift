import RTDBProtocol

/// Which requests the server takes, as seen from a browser on the same machine.
///
/// Binding to 127.0.0.1 keeps other machines out, but not web pages: any page a user opens
/// can send requests to 127.0.0.1, and with DNS rebinding can even read the answers. So:
/// - the `Host` header must name this machine: an IP address (no page can rebind one),
///   `localhost` or `NAME.localhost`, the address the server was told to listen on, or a
///   name given with `--allow-host`;
/// - a request that carries an `Origin` (every cross-site request from a browser, and every
///   browser WebSocket) must come from a page served from this machine — `http(s)://localhost`,
///   `NAME.localhost`, `127.x.x.x` or `[::1]`, any port — or from an origin given with
///   `--allow-origin` (`*` allows every origin). Programs send no `Origin` and are not affected.
public struct AccessPolicy: Sendable {
    public var allowedHosts: [String]
    public var allowedOrigins: [String]
    /// The address the server listens on, which its clients may also use as the host.
    public var listenHost: String

    public init(listenHost: String = "127.0.0.1", allowedHosts: [String] = [], allowedOrigins: [String] = []) {
        self.listenHost = listenHost
        self.allowedHosts = allowedHosts.map { $0.lowercased() }
        self.allowedOrigins = allowedOrigins.map { $0.lowercased() }
    }

    /// Nil when the `Host` header is acceptable, else why not.
    public func refusal(host header: String?) -> String? {
        guard let header, !header.isEmpty else { return nil }
        let host = HostName.name(ofHostHeader: header)
        if HostName.isIPAddress(host) || HostName.isLoopback(host) || host == listenHost.lowercased()
            || allowedHosts.contains(host) || allowedHosts.contains("*") {
            return nil
        }
        return "the Host \"\(host)\" does not name this server (a page may be trying DNS rebinding); start rtdb serve with --allow-host \(host) to allow it"
    }

    /// Nil when a request with this `Origin` header may be served, else why not.
    public func refusal(origin: String?) -> String? {
        guard let origin else { return nil }
        let lowered = origin.lowercased()
        if allowedOrigins.contains("*") || allowedOrigins.contains(lowered) { return nil }
        for scheme in ["http://", "https://"] where lowered.hasPrefix(scheme) {
            let host = HostName.name(ofHostHeader: String(lowered.dropFirst(scheme.count)))
            if HostName.isLoopback(host) { return nil }
        }
        return "requests from web pages at \(origin) are refused; start rtdb serve with --allow-origin \(origin) to allow them"
    }

    /// True when binding to `host` keeps the server on this machine (no warning needed).
    public static func isLoopback(listenHost host: String) -> Bool {
        HostName.isLoopback(host)
    }
}
