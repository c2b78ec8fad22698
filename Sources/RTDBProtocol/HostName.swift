import Foundation

/// Rules about host names that the client and the server share, so both read a host the
/// same way.
public enum HostName {
    /// The host name of a `Host` header value, lower case, without the port:
    /// `[::1]:9000` → `::1`, `Demo.localhost:9000` → `demo.localhost`.
    public static func name(ofHostHeader header: String) -> String {
        var host = Substring(header.lowercased())
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            return String(host[host.index(after: host.startIndex)..<close])
        }
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        return String(host)
    }

    /// An IPv4 or IPv6 address rather than a name.
    public static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// A name or address of this machine: `localhost`, `NAME.localhost`, `127.x.x.x`, `::1`.
    public static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        return host == "localhost" || host.hasSuffix(".localhost") || host == "::1"
            || (isIPAddress(host) && host.hasPrefix("127."))
    }

    /// The namespace a host names: the first label of a hosted database's host, as the
    /// official SDKs read it (`my-app.firebaseio.com`, `my-app.europe-west1.firebasedatabase.app`
    /// → `my-app`: three labels or more), or of a local `NAME.localhost`; "default" for an
    /// address and for other names (`localhost`, `mybox.lan`).
    public static func namespace(of host: String) -> String {
        let labels = host.lowercased().split(separator: ".")
        guard !isIPAddress(host), labels.count >= 3 || (labels.count == 2 && labels[1] == "localhost") else { return "default" }
        return String(labels[0])
    }
}
