import XCTest
@testable import RTDBClient

/// Flow control: writes wait, in order, while too many writes or too many entries are unanswered.
final class WriteGateTests: XCTestCase {
    /// Enters in a task of its own; `admitted` fulfils once it holds a place.
    private func enter(_ gate: WriteGate, _ entries: Int, _ admitted: XCTestExpectation) {
        Task {
            try await gate.enter(entries: entries)
            admitted.fulfill()
        }
    }

    private func waitForWaiters(_ gate: WriteGate, _ count: Int) async throws {
        for _ in 0..<500 where gate.waiters < count { try await Task.sleep(nanoseconds: 2_000_000) }
        XCTAssertEqual(gate.waiters, count)
    }

    func testEntriesBoundWritesInFlightAndWaitersKeepTheirOrder() async throws {
        let gate = WriteGate(limit: 10, entryLimit: 100)
        gate.setBounded(true)
        try await gate.enter(entries: 60)
        let second = expectation(description: "second"), third = expectation(description: "third")
        enter(gate, 60, second)  // 120 entries would be too many
        try await waitForWaiters(gate, 1)
        enter(gate, 1, third)  // would fit, but comes after one that waits
        try await waitForWaiters(gate, 2)
        XCTAssertEqual(gate.count, 1, "only the first holds a place")
        gate.leave(entries: 60)
        XCTAssertEqual(gate.count, 2, "the answer lets both in, in their order")
        XCTAssertEqual(gate.waiters, 0)
        await fulfillment(of: [second, third], timeout: 5)
    }

    /// With a deadline, a writer waits for room only while writes are answered: a server
    /// that answers none of them in that time fails the writer, which then holds no place.
    func testAWriterGivesUpOnAServerThatAnswersNothing() async throws {
        let gate = WriteGate(limit: 1)
        gate.setBounded(true)
        gate.setPatience(0.2)
        try await gate.enter()
        do {
            try await gate.enter()
            XCTFail("a place without an answer")
        } catch let stall as WriteStall {
            XCTAssertEqual(stall.description, "the server answered none of the 1 writes sent to it in 0.2 s: it does not answer (stopped or overloaded)")
        }
        XCTAssertEqual(gate.count, 1)
        XCTAssertEqual(gate.waiters, 0)
        // Answered, the next writer gets its place at once.
        gate.leave(entries: 1)
        try await gate.enter()
        XCTAssertEqual(gate.count, 1)
    }

    func testAWriteAloneGoesHoweverLarge() async throws {
        let gate = WriteGate(limit: 10, entryLimit: 100)
        gate.setBounded(true)
        try await gate.enter(entries: 10_000)
        XCTAssertEqual(gate.count, 1)
        let next = expectation(description: "next")
        enter(gate, 1, next)
        try await waitForWaiters(gate, 1)
        gate.leave(entries: 10_000)
        await fulfillment(of: [next], timeout: 5)
        XCTAssertEqual(gate.count, 1)
    }
}
