import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `rtdb serve` killed with SIGKILL under a write load keeps every write it acknowledged.
final class ServeCrashTests: XCTestCase {
    func testKillNineUnderLoadLosesNoAcknowledgedWrite() throws {
        let folder = Binary.temporaryFolder()
        let (server, port) = try Binary.startServer(folder: folder)
        let acked = Collected()
        let stop = Flag()
        let writers = DispatchGroup()
        for writer in 0..<6 {
            writers.enter()
            Thread.detachNewThread {
                var i = 0
                while !stop.isSet {
                    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/load/w\(writer)_\(i).json?ns=crash")!)
                    request.httpMethod = "PUT"
                    request.httpBody = Data("\(i)".utf8)
                    let done = DispatchSemaphore(value: 0)
                    let key = "w\(writer)_\(i)"
                    URLSession.shared.dataTask(with: request) { _, response, _ in
                        if (response as? HTTPURLResponse)?.statusCode == 200 { acked.add(key) }
                        done.signal()
                    }.resume()
                    done.wait()
                    i += 1
                }
                writers.leave()
            }
        }
        usleep(1_200_000)
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        stop.set()
        writers.wait()
        let keys = acked.all
        XCTAssertGreaterThan(keys.count, 10, "the load never got going")

        let (restarted, newPort) = try Binary.startServer(folder: folder)
        defer { kill(restarted.processIdentifier, SIGTERM); restarted.waitUntilExit() }
        let result = try Binary.run(["--url", "ws://127.0.0.1:\(newPort)?ns=crash", "get", "/load", "--shallow"])
        let stored = Set((try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?.keys.map { $0 } ?? [])
        let lost = keys.filter { !stored.contains($0) }
        XCTAssertEqual(lost, [], "\(lost.count) of \(keys.count) acknowledged writes lost")
    }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}

final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ item: String) { lock.lock(); items.append(item); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
}
