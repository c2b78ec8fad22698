import NIOCore
import NIOEmbedded
import NIOWebSocket
import XCTest
import RTDBData
import RTDBProtocol
import RTDBTransport
@testable import RTDBServer

/// The frames `FrameWriter` writes itself (a batch in one buffer, below the frame encoder),
/// read back by NIO's own frame decoder: both length forms a piece can need, the count frame
/// and the pieces of a long message, masked from a client and plain from a server.
final class FrameWriterTests: XCTestCase {
    func testBatchesReadBackAsTheMessagesFrames() throws {
        let messages: [Message] = [
            .request(id: 1, .put(path: Path("a"), data: Node(1), hash: nil)),                                       // < 126 bytes
            .request(id: 2, .put(path: Path("b"), data: Node(String(repeating: "x", count: 300)), hash: nil)),      // 16-bit length
            .request(id: 3, .put(path: Path("c"), data: Node(String(repeating: "€", count: 40_000)), hash: nil)),   // a count frame, pieces
            .request(id: 4, .put(path: Path("d"), data: Node(String(repeating: "y", count: 16_000)), hash: nil)),
        ]
        var expected: [String] = []
        for message in messages { expected += WireFraming.frames(for: WireCodec.encode(message)) }
        // Pieces hold at most 16384 UTF-16 units: 49,152 bytes of "€", a 16-bit length.
        XCTAssertEqual(expected.map(\.utf8.count).max(), 16384 * 3)
        XCTAssertEqual(expected.count, 1 + 1 + (1 + 3) + 1)

        for masked in [true, false] {
            let sender = EmbeddedChannel(handler: WebSocketFrameEncoder())
            let writer = FrameWriter(channel: sender, masked: masked)
            for message in messages { writer.write(message) }
            sender.embeddedEventLoop.run()
            let receiver = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 24)))
            var writes = 0
            while let bytes = try sender.readOutbound(as: ByteBuffer.self) {
                writes += 1
                try receiver.writeInbound(bytes)
            }
            // The batch in buffers of at most 64 KiB: the three pieces of the long message
            // (49,152 bytes each but the last) do not fit two to a buffer.
            XCTAssertEqual(writes, 3)
            var texts: [String] = []
            while let frame = try receiver.readInbound(as: WebSocketFrame.self) {
                XCTAssertTrue(frame.fin)
                XCTAssertEqual(frame.opcode, .text)
                XCTAssertEqual(frame.maskKey != nil, masked)
                texts.append(String(buffer: frame.unmaskedData))
            }
            XCTAssertEqual(texts, expected, masked ? "masked" : "plain")
        }
    }

    /// The server's WebSocket end offers a listen's first data to its writer, which refuses
    /// it over the limit (a transport without a limit of its own sends whatever it is given).
    func testTheServersTransportRefusesDataOverItsLimit() throws {
        let channel = EmbeddedChannel(handler: WebSocketFrameEncoder())
        let transport: Transport = WebSocketTransport(channel: channel, log: { _ in }, maxAnswerBytes: 1000)
        XCTAssertFalse(transport.sendIfItFits(.push(.data(path: Path("p"), data: Node(String(repeating: "z", count: 1000)), tag: nil))))
        XCTAssertTrue(transport.sendIfItFits(.push(.data(path: Path("p"), data: Node(1), tag: nil))))
        XCTAssertEqual(try FrameWriterTests.texts(sentOn: channel), [#"{"t":"d","d":{"a":"d","b":{"p":"p","d":1}}}"#])
    }

    /// An answer larger than the limit goes out as a `too_big` refusal of the same request
    /// (the peer would drop the connection over it, and ask again); other messages as they are.
    func testAnAnswerTooLargeIsRefusedAsTooBig() throws {
        let big = Node(String(repeating: "z", count: 1_100_000))
        let messages: [Message] = [
            .response(id: 7, .value(big)),
            .response(id: 8, .value(Node(1))),
            .push(.data(path: Path("p"), data: big, tag: nil)),
        ]
        let sender = EmbeddedChannel(handler: WebSocketFrameEncoder())
        let writer = FrameWriter(channel: sender, masked: false, maxAnswerBytes: 1 << 20)
        for message in messages { writer.write(message) }
        // A listen's first data is offered: over the limit, it is not written.
        XCTAssertFalse(writer.writeIfItFits(messages[2]))
        XCTAssertTrue(writer.writeIfItFits(.push(.data(path: Path("p"), data: Node(1), tag: nil))))
        let texts = try FrameWriterTests.texts(sentOn: sender)
        XCTAssertTrue(texts == [
            #"{"t":"d","d":{"r":7,"b":{"s":"too_big","d":"The data requested exceeds the maximum size that can be accessed with a single request (1 MB); read its children instead"}}}"#,
        ] + WireFraming.frames(for: WireCodec.encode(messages[1])) + WireFraming.frames(for: WireCodec.encode(messages[2]))
            + [#"{"t":"d","d":{"a":"d","b":{"p":"p","d":1}}}"#], "\(texts.map { $0.prefix(200) })")
    }

    /// The text frames written on `channel` so far, read back by NIO's frame decoder.
    private static func texts(sentOn channel: EmbeddedChannel) throws -> [String] {
        channel.embeddedEventLoop.run()
        let receiver = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 24)))
        while let bytes = try channel.readOutbound(as: ByteBuffer.self) { try receiver.writeInbound(bytes) }
        var texts: [String] = []
        while let frame = try receiver.readInbound(as: WebSocketFrame.self) { texts.append(String(buffer: frame.unmaskedData)) }
        return texts
    }
}
