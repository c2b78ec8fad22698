import NIOCore

/// How a monitor names where a connection comes from: `127.0.0.1:51234`, `[::1]:51234`, or
/// `unix` for a data folder's socket.
enum PeerAddress {
    static func describe(_ address: SocketAddress?) -> String {
        guard let address else { return "?" }
        switch address {
        case .v4: return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        case .v6: return "[\(address.ipAddress ?? "?")]:\(address.port ?? 0)"
        case .unixDomainSocket: return "unix"
        }
    }
}
