import Foundation
import NIOSSL
import RTDBProtocol

/// TLS for `wss://` connections: the server's certificate is checked against the system's
/// trusted authorities, or against `trustedCertificates` (a PEM file, e.g. the certificate
/// of a local `rtdb serve --tls-cert`), and must name the host connected to.
public enum ClientTLS {
    public static func context(trustedCertificates: String? = nil) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let file = trustedCertificates {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw WireError("cannot read the certificate file \(file)")
            }
            do {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
            } catch {
                throw WireError("\(file) holds no PEM certificate")
            }
        }
        return try NIOSSLContext(configuration: configuration)
    }

    /// The name sent for SNI and checked in the certificate; nil for an IP address, whose
    /// certificate is checked against the address itself.
    static func serverName(for host: String) -> String? {
        HostName.isIPAddress(host) ? nil : host
    }
}
