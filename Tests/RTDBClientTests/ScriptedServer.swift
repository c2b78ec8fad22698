import Foundation
import RTDBData
import RTDBProtocol
@testable import RTDBClient

/// A client whose every connection goes to a scripted server: the server says hello, then
/// `answer` sees each request with its id and sends what it likes through the server's end.
func scriptedRepo(_ answer: @escaping @Sendable (_ server: InProcessTransport, _ id: Int, _ request: Request) -> Void) -> Repo {
    Repo(connector: { _, _ in
        let (client, server) = InProcessTransport.pair()
        server.start(onMessage: { message in
            guard case .request(let id, let request, _) = message else { return }
            answer(server, id, request)
        }, onClose: {})
        server.send(.handshake(Handshake(timestamp: Int64(Date().timeIntervalSince1970 * 1000), host: "", sessionID: "s")))
        return client
    }, reconnect: .never)
}
