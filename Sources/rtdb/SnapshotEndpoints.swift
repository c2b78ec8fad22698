import Foundation
import RTDBData
import RTDBProtocol
import RTDBTransport

/// The snapshot endpoints of rtdb serve (`/.settings/snapshots…`, the owner's), as a client
/// calls them: the request each operation makes, and what its answer means. `send` makes
/// one request (`method`, path) with the credential and namespace the caller adds.
struct SnapshotEndpoints: Sendable {
    /// Whom the errors name ("localhost", "the rtdb process that has FOLDER").
    let server: String
    let send: @Sendable (_ method: String, _ path: String, _ slow: Bool) async throws -> HTTPClient.Answer

    func list() async throws -> [SnapshotInfo] {
        let answer = try await send("GET", "/.settings/snapshots.json", false)
        guard answer.status == 200 else { throw refusal(answer) }
        guard let json = try? JSONValue.parse(answer.text), let list = SnapshotInfo.list(json: json) else {
            throw RemoteError("\(server) did not answer with a list of snapshots")
        }
        return list
    }

    /// How long a save may take: it writes the whole tree to a file.
    static let saveTimeout: Double = 3600

    func save(_ name: String) async throws -> SnapshotInfo {
        let answer = try await send("PUT", "/.settings/snapshots/\(name).json", true)
        guard answer.status == 200 else { throw refusal(answer) }
        guard let json = try? JSONValue.parse(answer.text), let saved = SnapshotInfo.list(json: json)?.first(where: { $0.name == name }) else {
            throw RemoteError("\(server) did not answer the save with the snapshot")
        }
        return saved
    }

    func restore(_ name: String) async throws {
        let answer = try await send("POST", "/.settings/snapshots/\(name)/restore.json", false)
        guard answer.status == 200 else { throw refusal(answer) }
    }

    func remove(_ name: String) async throws -> Bool {
        let answer = try await send("DELETE", "/.settings/snapshots/\(name).json", false)
        if answer.status == 404, (try? JSONValue.parse(answer.text))?["error"]?.string == "there is no snapshot named \(name)" { return false }
        guard answer.status == 200 else { throw refusal(answer) }
        return true
    }

    /// Why the server refused, with what to do about it when that is known.
    private func refusal(_ answer: HTTPClient.Answer) -> RemoteError {
        let reason = (try? JSONValue.parse(answer.text))?["error"]?.string
        switch answer.status {
        case 401:
            return RemoteError("\(server) refused: \(reason ?? "permission denied") (auth with owner)")
        case 404 where reason?.hasPrefix("there is no snapshot named") == true:
            return RemoteError(reason ?? "")
        case 404, 405:
            return RemoteError("\(server) refused: \(reason ?? "HTTP \(answer.status)") (rtdb serve and an embedded database keep snapshots; hosted Firebase and its emulator do not)")
        default:
            return RemoteError("\(server) could not do it: \(reason ?? "HTTP \(answer.status)")")
        }
    }
}
