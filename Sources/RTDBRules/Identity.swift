import Foundation
import RTDBData

/// Who a request comes from, as the rules see it.
public enum Identity: Sendable, Equatable {
    /// The database's owner (the `owner` credential, an embedded database): rules do not apply.
    case admin
    /// No credential: `auth` is null.
    case anonymous
    /// A user: `auth` is `{uid, provider, token}`; `expires` in seconds since the epoch.
    case user(uid: String, claims: JSONValue, expires: Double?)

    /// The literal credential the Firebase emulator takes as the owner's.
    public static let ownerCredential = "owner"

    /// A user's uid; nil for the owner and no one.
    public var uid: String? {
        if case .user(let uid, _, _) = self { return uid }
        return nil
    }

    /// `auth` in a rule.
    var ruleValue: RuleValue {
        guard case let .user(uid, claims, _) = self else { return .null }
        // Firebase's short names: google.com is google.
        var provider = "custom"
        if case .string(let p)? = claims["firebase"]?["sign_in_provider"] {
            provider = p.hasSuffix(".com") ? String(p.dropLast(4)) : p
        }
        return .auth(RuleAuth(uid: uid, provider: provider, claims: claims))
    }

    /// Why a credential is refused.
    public enum Refusal: Error, Equatable, Sendable {
        case invalid(String)
        case expired
    }

    /// The identity a credential names, as the emulator takes it: `owner`, or a JWT whose
    /// claims are used as they are (its signature is not checked). A signed token is refused
    /// from its `exp` on; an unsigned one (`alg: none`, no signature) never expires: the
    /// official SDKs make their emulator test tokens (`mockUserToken`) that way with an `exp`
    /// of 3600, in 1970, and the emulator takes them. `now` in seconds.
    public static func from(credential: String, now: Double) throws(Refusal) -> Identity {
        if credential == ownerCredential { return .admin }
        guard let claims = claims(ofToken: credential) else {
            throw .invalid("the credential is neither \"owner\" nor a JSON Web Token")
        }
        return try from(claims: claims, now: isUnsigned(token: credential) ? nil : now)
    }

    /// As `from(credential:now:)`; the owner may act as someone else: `acting` is the `auth`
    /// the rules then see (`authvar`, `auth_variable_override`), null for no one (`noauth`).
    public static func from(credential: String, acting: JSONValue?, now: Double) throws(Refusal) -> Identity {
        let named = try from(credential: credential, now: now)
        guard named == .admin, let acting else { return named }
        return acting == .null ? .anonymous : try from(claims: acting, now: now)
    }

    /// A user from a token's claims (`sub` or `user_id`; a legacy token's `d.uid`), or from the
    /// object an admin names with `authvar` / `auth_variable_override`. Without `now` its
    /// `exp` is not a deadline (an unsigned token's).
    public static func from(claims: JSONValue, now: Double?) throws(Refusal) -> Identity {
        var claims = claims
        let expires = now == nil ? nil : claims["exp"]?.number
        // A legacy Firebase token carries its user in "d" (and no "sub").
        if claims["sub"] == nil, claims["user_id"] == nil, let legacy = claims["d"], legacy.members != nil { claims = legacy }
        guard let uid = claims["sub"]?.string ?? claims["user_id"]?.string ?? claims["uid"]?.string, !uid.isEmpty else {
            throw .invalid("the token names no user: it has no \"sub\", \"user_id\" or \"uid\" claim")
        }
        if let expires, let now, now >= expires { throw .expired }
        return .user(uid: uid, claims: claims, expires: expires)
    }

    /// An unsigned ID token (`alg: none`) for `uid`, as the emulator's `mockUserToken` makes
    /// them: for local servers, which take its claims as they are. `claims` are added to the
    /// standard ones (an object); `now` in seconds. Its `exp` is an hour on, though servers that
    /// take unsigned tokens do not hold it to that.
    public static func unsignedToken(uid: String, claims: JSONValue = .object([]), now: Double) -> String {
        let seconds = JSONValue.number(now.rounded(.down))
        var payload: [(String, JSONValue)] = [
            ("iss", .string("https://securetoken.google.com/rtdb-local")), ("aud", .string("rtdb-local")),
            ("iat", seconds), ("exp", .number(now.rounded(.down) + 3600)), ("auth_time", seconds),
            ("sub", .string(uid)), ("user_id", .string(uid)),
            ("firebase", .object([("identities", .object([])), ("sign_in_provider", .string("custom"))])),
        ]
        for (key, value) in claims.members ?? [] where !["sub", "user_id"].contains(key) {
            payload.removeAll { $0.0 == key }
            payload.append((key, value))
        }
        let header = JSONValue.object([("alg", .string("none")), ("typ", .string("JWT"))])
        return Base64URL.encode(Array(header.serialized().utf8)) + "." + Base64URL.encode(Array(JSONValue.object(payload).serialized().utf8)) + "."
    }

    /// Whether a JWT is unsigned: its header says `"alg": "none"` and its signature is empty.
    public static func isUnsigned(token: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].isEmpty, let header = Base64URL.decode(parts[0]),
              let fields = try? JSONValue.parse(String(decoding: header, as: UTF8.self)) else { return false }
        return fields["alg"]?.string == "none"
    }

    /// The claims of a JWT, unverified; nil when `token` is not one.
    public static func claims(ofToken token: String) -> JSONValue? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
              let claims = try? JSONValue.parse(String(decoding: payload, as: UTF8.self)), claims.members != nil else { return nil }
        return claims
    }
}
