import _CryptoExtras
import Crypto
import Foundation
import NIOCore
import RTDBData
import RTDBProtocol

/// A Google service-account key (the JSON file the Firebase console downloads) and the
/// OAuth2 exchange that turns it into access tokens: a JWT assertion signed with the key
/// (RS256), posted to the key's token endpoint. The private key never leaves this process.
public struct ServiceAccount: Sendable {
    public let email: String
    public let projectID: String?
    public let tokenURI: URL
    private let key: _RSA.Signing.PrivateKey

    /// What an access token may do: the Realtime Database, and the account's identity.
    public static let scopes = "https://www.googleapis.com/auth/firebase.database https://www.googleapis.com/auth/userinfo.email"

    /// Reads a key file; the error says which field is missing or wrong (never the key).
    public init(file: String) throws {
        guard let data = FileManager.default.contents(atPath: file) else { throw WireError("cannot read the service account key \(file)") }
        guard let json = try? JSONValue.parse(String(decoding: data, as: UTF8.self)), json.members != nil else {
            throw WireError("\(file) is not a service account key: it is not a JSON object")
        }
        guard json["type"]?.string == "service_account" else {
            throw WireError("\(file) is not a service account key (its \"type\" is not \"service_account\")")
        }
        guard let email = json["client_email"]?.string, !email.isEmpty else { throw WireError("\(file) has no \"client_email\"") }
        guard let pem = json["private_key"]?.string else { throw WireError("\(file) has no \"private_key\"") }
        let uri = json["token_uri"]?.string ?? "https://oauth2.googleapis.com/token"
        guard let tokenURI = URL(string: uri), ["http", "https"].contains(tokenURI.scheme ?? ""), tokenURI.host != nil else {
            throw WireError("\(file) has a \"token_uri\" that is not an http(s) URL")
        }
        do { key = try _RSA.Signing.PrivateKey(pemRepresentation: pem) } catch {
            throw WireError("the \"private_key\" of \(file) is not an RSA private key of 2048 bits or more in PEM form")
        }
        self.email = email
        self.projectID = json["project_id"]?.string
        self.tokenURI = tokenURI
    }

    /// The signed assertion for an exchange at `now` (seconds since the epoch), valid an hour.
    public func assertion(now: Double) throws -> String {
        let issued = now.rounded(.down)
        let header = JSONValue.object([("alg", .string("RS256")), ("typ", .string("JWT"))])
        let claims = JSONValue.object([
            ("iss", .string(email)), ("scope", .string(Self.scopes)), ("aud", .string(tokenURI.absoluteString)),
            ("iat", .number(issued)), ("exp", .number(issued + 3600)),
        ])
        let signed = Base64URL.encode(Array(header.serialized().utf8)) + "." + Base64URL.encode(Array(claims.serialized().utf8))
        let signature = try key.signature(for: SHA256.hash(data: Array(signed.utf8)), padding: .insecurePKCS1v1_5)
        return signed + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    /// An access token and how many seconds it lasts, from the token endpoint.
    public func accessToken(group: EventLoopGroup, timeout: TimeInterval) async throws -> (token: String, lifetime: Double) {
        let form = "grant_type=" + PercentEncoding.encode("urn:ietf:params:oauth:grant-type:jwt-bearer")
            + "&assertion=" + PercentEncoding.encode(try assertion(now: Date().timeIntervalSince1970))
        let secure = tokenURI.scheme == "https"
        let host = tokenURI.host ?? ""
        let port = tokenURI.port ?? (secure ? 443 : 80)
        var target = tokenURI.path.isEmpty ? "/" : tokenURI.path
        if let query = tokenURI.query { target += "?" + query }
        let answer = try await HTTPClient.send("POST", host: host, port: port, target: target,
                                               headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                                               body: Array(form.utf8), tls: secure ? try ClientTLS.context() : nil, group: group, timeout: timeout)
        let json = try? JSONValue.parse(answer.text)
        guard answer.status == 200, let token = json?["access_token"]?.string, !token.isEmpty else {
            let reason = [json?["error"]?.string, json?["error_description"]?.string].compactMap { $0 }.joined(separator: ": ")
            throw Refusal(description: "the token endpoint \(host) refused the service account \(email): \(reason.isEmpty ? "HTTP \(answer.status)" : reason)")
        }
        let lifetime = json?["expires_in"]?.number ?? 3600
        return (token, max(1, min(lifetime, 24 * 3600)))
    }

    /// The token endpoint answered, and not with a token: asking again will not help.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }
}
