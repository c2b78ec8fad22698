import Foundation
import RTDBData

/// Where a client connects: host, port, namespace, and the WebSocket path with the
/// protocol's parameters.
public struct ServerAddress: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var namespace: String
    public var secure: Bool
    /// A Unix socket to connect to instead of host and port: another rtdb process that
    /// owns an embedded database's folder.
    public var socketPath: String?

    public init(host: String, port: Int, namespace: String, secure: Bool = false) {
        self.host = host
        self.port = port
        self.namespace = namespace
        self.secure = secure
    }

    /// The database served on the Unix socket at `path`.
    public static func socket(_ path: String) -> ServerAddress {
        var address = ServerAddress(host: "localhost", port: 80, namespace: "default")
        address.socketPath = path
        return address
    }

    /// `ws://…`, `http://…` (local servers and the emulator, `?ns=NAME`), `wss://…` and
    /// `https://NAME.firebaseio.com` (namespace from the host unless `?ns=` says otherwise).
    public static func parse(_ text: String) throws -> ServerAddress {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty else {
            throw WireError("not a database URL: \(text) (try ws://127.0.0.1:9000?ns=demo)")
        }
        let secure: Bool
        switch scheme {
        case "ws", "http": secure = false
        case "wss", "https": secure = true
        default: throw WireError("unsupported URL scheme \"\(scheme)\": use ws://, http://, wss:// or https://")
        }
        let namespace = components.queryItems?.first { $0.name == "ns" }?.value ?? HostName.namespace(of: host)
        return ServerAddress(host: host, port: components.port ?? (secure ? 443 : 80), namespace: namespace, secure: secure)
    }

    /// The WebSocket request path: `/.ws?v=5&ns=NAME`, with `ls=ID` naming the previous
    /// session when reconnecting.
    public func webSocketPath(lastSessionID: String? = nil) -> String {
        "/.ws?v=5" + (lastSessionID.map { "&ls=" + $0 } ?? "") + "&ns=" + namespace
    }

    /// The same database at the host a server named (`host` or `host:port`), as its hello
    /// or a redirect gives it.
    public func at(host newHost: String) -> ServerAddress {
        var moved = self
        if let colon = newHost.lastIndex(of: ":"), !newHost.hasSuffix("]"), let port = Int(newHost[newHost.index(after: colon)...]) {
            moved.host = String(newHost[..<colon])
            moved.port = port
        } else {
            moved.host = newHost
            moved.port = secure ? 443 : 80
        }
        if moved.host.hasPrefix("["), moved.host.hasSuffix("]") { moved.host = String(moved.host.dropFirst().dropLast()) }
        return moved
    }

    /// `host:port` as the Host header names it (the port left out when it is the default).
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }

    public var description: String {
        if let socketPath { return "unix:" + socketPath }
        return "\(secure ? "wss" : "ws")://\(host):\(port)/.ws?ns=\(namespace)"
    }
}
