import NIOCore
import NIOEmbedded
import NIOHTTP1
import XCTest
import RTDBData
import RTDBProtocol
@testable import RTDBEngine
@testable import RTDBServer
import RTDBRules

/// The Server-Sent Events a REST stream writes, byte for byte.
final class EventStreamTests: XCTestCase {
    func testEventsAndTheirEnd() throws {
        let channel = EmbeddedChannel()
        let stream = EventStream(channel: channel, path: Path("chat"), identity: .anonymous)
        stream.start(version: .http1_1)
        stream.send(.data(path: Path("chat/a"), data: Node(1), tag: nil))
        stream.send(.merge(path: Path("chat"), data: [UpdateEntry(Path("b/c"), Node("x"))], tag: nil))
        stream.send(.authRevoked(status: "expired_token", reason: "Auth token is expired."))
        channel.embeddedEventLoop.run()

        guard case .head(let head)? = try channel.readOutbound(as: HTTPServerResponsePart.self) else { return XCTFail("no head") }
        XCTAssertEqual(head.headers["Content-Type"], ["text/event-stream"])
        var events = ""
        var ended = false
        while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) {
            switch part {
            case .body(.byteBuffer(let buffer)): events += String(buffer: buffer)
            case .end: ended = true
            default: XCTFail("unexpected \(part)")
            }
        }
        XCTAssertEqual(events, """
        event: put
        data: {"path":"/a","data":1}

        event: patch
        data: {"path":"/","data":{"b/c":"x"}}

        event: auth_revoked
        data: "Auth token is expired."


        """)
        XCTAssertTrue(ended, "the stream ends after auth_revoked")
        XCTAssertFalse(channel.isActive)
    }

    /// `format=export`: values with their priorities, in puts and in patches.
    func testExportKeepsPriorities() throws {
        let channel = EmbeddedChannel()
        let stream = EventStream(channel: channel, path: Path("q"), identity: .anonymous, export: true)
        stream.start(version: .http1_1)
        stream.send(.data(path: Path("q/a"), data: Node(.number(1), priority: .number(5)), tag: nil))
        stream.send(.merge(path: Path("q"), data: [UpdateEntry(Path("b"), Node(.string("x"), priority: .string("p")))], tag: nil))
        channel.embeddedEventLoop.run()
        _ = try channel.readOutbound(as: HTTPServerResponsePart.self)
        var events = ""
        while case .body(.byteBuffer(let buffer))? = try channel.readOutbound(as: HTTPServerResponsePart.self) { events += String(buffer: buffer) }
        XCTAssertEqual(events, """
        event: put
        data: {"path":"/a","data":{".value":1,".priority":5}}

        event: patch
        data: {"path":"/","data":{"b":{".value":"x",".priority":"p"}}}


        """)
    }

    func testCancelEndsTheStream() throws {
        let channel = EmbeddedChannel()
        let stream = EventStream(channel: channel, path: Path("secret"), identity: .anonymous)
        stream.start(version: .http1_1)
        stream.send(.listenRevoked(path: Path("secret"), query: nil))
        channel.embeddedEventLoop.run()
        _ = try channel.readOutbound(as: HTTPServerResponsePart.self)
        guard case .body(.byteBuffer(let buffer))? = try channel.readOutbound(as: HTTPServerResponsePart.self) else { return XCTFail("no event") }
        XCTAssertEqual(String(buffer: buffer), "event: cancel\ndata: \"Permission denied\"\n\n")
        guard case .end? = try channel.readOutbound(as: HTTPServerResponsePart.self) else { return XCTFail("no end") }
    }
}
