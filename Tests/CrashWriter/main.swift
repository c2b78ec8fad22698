// Writes to a data folder as fast as it can and prints "ack N" for each write the engine
// acknowledged. The crash test kills it with SIGKILL and checks that every printed write
// survived. Even writes are single sets; odd ones are two-path updates that must be atomic.
import Foundation
import RTDBClient
import RTDBData
import RTDBProtocol
import RTDBEngine

let arguments = CommandLine.arguments
guard arguments.count == 3, let round = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: rtdb-crash-writer FOLDER ROUND\n".utf8))
    exit(2)
}
let database = try Database(folder: arguments[1])
let (client, server) = InProcessTransport.pair()
database.accept(server)
let repo = Repo(transport: client)
// At most 64 writes in flight: the core makes the next one wait for a place.
repo.setMaxPendingWrites(64)
var n = 0
while true {
    let write: PendingWrite
    if n % 2 == 0 {
        write = try await repo.set(Path("r\(round)/k\(n)"), Node(Double(n)))
    } else {
        write = try await repo.update(Path("r\(round)/m\(n)"), [UpdateEntry(Path("a"), Node(Double(n))), UpdateEntry(Path("b/c"), Node(Double(n)))])
    }
    write.whenAnswered { [n] result in
        // Unbuffered: a line is out before the next write can be acknowledged.
        if case .success = result { FileHandle.standardOutput.write(Data("ack \(n)\n".utf8)) }
    }
    n += 1
}
