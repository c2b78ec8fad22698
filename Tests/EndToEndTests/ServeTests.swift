import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `rtdb serve` as a user runs it, driven over HTTP on 127.0.0.1.
final class ServeTests: XCTestCase {
    var server: Process!
    var port = 0
    var folder: String!
    var log: Drain!

    override func setUpWithError() throws {
        folder = Binary.temporaryFolder()
        (server, port, log) = try Binary.startLoggingServer(folder: folder)
    }

    override func tearDown() {
        if server.isRunning {
            kill(server.processIdentifier, SIGTERM)
            server.waitUntilExit()
        }
    }

    func request(_ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:]) throws -> (Int, String, [String: String]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        let done = DispatchSemaphore(value: 0)
        let result = Answer()
        URLSession.shared.dataTask(with: request) { data, response, _ in
            let http = response as? HTTPURLResponse
            var fields: [String: String] = [:]
            for (k, v) in http?.allHeaderFields ?? [:] { fields[String(describing: k).lowercased()] = String(describing: v) }
            result.value = (http?.statusCode ?? 0, String(decoding: data ?? Data(), as: UTF8.self), fields)
            done.signal()
        }.resume()
        done.wait()
        return result.value
    }

    /// `@unchecked Sendable`: written before `done.signal()`, read after `done.wait()`.
    final class Answer: @unchecked Sendable {
        var value: (Int, String, [String: String]) = (0, "", [:])
    }

    func testRESTWritesReadsAndErrors() throws {
        XCTAssertEqual(try request("PUT", "/users/ada.json?ns=demo", body: #"{"name":"Ada","born":1815}"#).1, #"{"born":1815,"name":"Ada"}"#)
        XCTAssertEqual(try request("PATCH", "/users.json?ns=demo", body: #"{"ada/born":1816,"bob/name":"Bob"}"#).1, #"{"ada":{"born":1816},"bob":{"name":"Bob"}}"#)
        let push = try request("POST", "/log.json?ns=demo", body: #""hello""#)
        XCTAssertTrue(push.1.hasPrefix(#"{"name":"-"#), push.1)
        XCTAssertEqual(try request("GET", "/users.json?ns=demo&shallow=true").1, #"{"ada":true,"bob":true}"#)
        XCTAssertEqual(try request("GET", "/users.json?ns=demo&orderBy=%22$key%22&limitToLast=1").1, #"{"bob":{"name":"Bob"}}"#)
        XCTAssertEqual(try request("PUT", "/silent.json?ns=demo&print=silent", body: "1").0, 204)
        XCTAssertEqual(try request("DELETE", "/silent.json?ns=demo").1, "null")
        // Namespaces are separate databases.
        XCTAssertEqual(try request("GET", "/users.json?ns=other").1, "null")

        let bad = try request("GET", "/a$b.json?ns=demo")
        XCTAssertEqual(bad.0, 400)
        XCTAssertTrue(bad.1.hasPrefix(#"{"error":"Invalid path: invalid key"#), bad.1)
        XCTAssertEqual(try request("PUT", "/x.json?ns=demo", body: "{").0, 400)
        XCTAssertEqual(try request("GET", "/x.json?ns=demo&limitToFirst=2").1, #"{"error":"orderBy must be defined when other query parameters are defined"}"#)
        XCTAssertEqual(try request("GET", "/x.json?ns=bad%20name").0, 404)
        // Refused requests are logged, credentials blanked.
        XCTAssertEqual(try request("PUT", "/y.json?ns=demo&auth=s3cret", body: "[1,").0, 401)
        XCTAssertTrue(log.waitFor("REST PUT /y.json?ns=demo&auth=REDACTED from "), "the refusal is logged")
        XCTAssertTrue(log.waitFor(": 401 Could not parse auth token: the credential is neither \"owner\" nor a JSON Web Token"))
        XCTAssertEqual(try request("PUT", "/y.json?ns=demo", body: "[1,").0, 400)
        XCTAssertTrue(log.waitFor(": 400 Invalid data; couldn't parse JSON object, array, or value"))
        XCTAssertTrue(log.waitFor("REST GET /a$b.json?ns=demo from "))
        kill(server.processIdentifier, SIGTERM)
        server.waitUntilExit()
        XCTAssertFalse(log.text().contains("s3cret"))
    }

    func testETags() throws {
        _ = try request("PUT", "/n.json?ns=demo", body: "1")
        let read = try request("GET", "/n.json?ns=demo", headers: ["X-Firebase-ETag": "true"])
        let etag = try XCTUnwrap(read.2["etag"])
        XCTAssertEqual(try request("GET", "/n.json?ns=demo", headers: ["if-none-match": etag]).0, 304)
        let stale = try request("PUT", "/n.json?ns=demo", body: "5", headers: ["if-match": "not-it"])
        XCTAssertEqual(stale.0, 412)
        XCTAssertEqual(stale.1, "1")
        XCTAssertEqual(stale.2["etag"], etag)
        XCTAssertEqual(try request("PUT", "/n.json?ns=demo", body: "2", headers: ["if-match": etag]).0, 200)
        XCTAssertEqual(try request("PUT", "/fresh.json?ns=demo", body: "1", headers: ["if-match": "null_etag"]).0, 200)
        XCTAssertEqual(try request("PUT", "/fresh.json?ns=demo", body: "1", headers: ["if-match": "null_etag"]).0, 412)
    }

    /// rtdb's guarded PATCH: a rename made of one update, written only while both ETags still
    /// match what was read; a change in between is a 412 naming the path, with nothing written.
    func testGuardedPatchWritesOnlyWhatWasRead() throws {
        _ = try request("PUT", "/g.json?ns=demo", body: #"{"a":{"x":1}}"#)
        let read = try request("GET", "/g/a.json?ns=demo", headers: ["X-Firebase-ETag": "true"])
        let etag = try XCTUnwrap(read.2["etag"])
        let guards = #"{"a":"\#(etag)","b":"null_etag"}"#
        _ = try request("PUT", "/g/a/x.json?ns=demo", body: "2")
        let stale = try request("PATCH", "/g.json?ns=demo", body: #"{"b":{"x":1},"a":null}"#, headers: ["X-Rtdb-Guards": guards])
        XCTAssertEqual(stale.0, 412)
        XCTAssertEqual(stale.1, #"{"error":"the data at /g/a changed since it was read"}"#)
        XCTAssertEqual(try request("GET", "/g.json?ns=demo").1, #"{"a":{"x":2}}"#)
        let again = try XCTUnwrap(try request("GET", "/g/a.json?ns=demo", headers: ["X-Firebase-ETag": "true"]).2["etag"])
        let moved = try request("PATCH", "/g.json?ns=demo", body: #"{"b":{"x":2},"a":null}"#,
                                headers: ["X-Rtdb-Guards": #"{"a":"\#(again)","b":"null_etag"}"#])
        XCTAssertEqual(moved.0, 200)
        XCTAssertEqual(try request("GET", "/g.json?ns=demo").1, #"{"b":{"x":2}}"#)
        // An empty update is checked too; a guard on another method is refused, not ignored.
        XCTAssertEqual(try request("PATCH", "/g.json?ns=demo", body: "{}", headers: ["X-Rtdb-Guards": #"{"b":"null_etag"}"#]).0, 412)
        XCTAssertEqual(try request("PATCH", "/g.json?ns=demo", body: "{}", headers: ["X-Rtdb-Guards": #"{"a":"null_etag"}"#]).0, 200)
        let put = try request("PUT", "/g/c.json?ns=demo", body: "1", headers: ["X-Rtdb-Guards": #"{"a":"null_etag"}"#])
        XCTAssertEqual(put.0, 400)
        XCTAssertEqual(put.1, #"{"error":"X-Rtdb-Guards guards a PATCH; a PUT or DELETE takes if-match"}"#)
        // A key beyond ASCII travels escaped, as JSON allows.
        _ = try request("PUT", "/g/caf%C3%A9.json?ns=demo", body: "1")
        let cafe = try XCTUnwrap(try request("GET", "/g/caf%C3%A9.json?ns=demo", headers: ["X-Firebase-ETag": "true"]).2["etag"])
        XCTAssertEqual(try request("PATCH", "/g.json?ns=demo", body: #"{"caf\u00e9":null,"\u043a":1}"#,
                                   headers: ["X-Rtdb-Guards": #"{"caf\u00e9":"\#(cafe)","\u043a":"null_etag"}"#]).0, 200)
        XCTAssertEqual(try request("GET", "/g.json?ns=demo").1, #"{"b":{"x":2},"к":1}"#)
        let bad = try request("PATCH", "/g.json?ns=demo", body: #"{"c":1}"#, headers: ["X-Rtdb-Guards": "[1]"])
        XCTAssertEqual(bad.0, 400)
        XCTAssertEqual(bad.1, #"{"error":"Invalid X-Rtdb-Guards header: it is a JSON object of relative paths to ETags, as {\"a/b\": \"ETAG\"}"}"#)
    }

    /// `depth=N`: a read cut N levels down, objects there as their number of children; on an
    /// event stream only with a window.
    func testDepthCutsAReadToItsCounts() throws {
        _ = try request("PUT", "/cut.json?ns=demo", body: #"{"a":{"x":{"y":1}},"b":2}"#)
        XCTAssertEqual(try request("GET", "/cut.json?ns=demo&depth=1").1, #"{"a":{".count":1},"b":2}"#)
        XCTAssertEqual(try request("GET", "/cut.json?ns=demo&depth=2").1, #"{"a":{"x":{".count":1}},"b":2}"#)
        XCTAssertEqual(try request("GET", "/cut.json?ns=demo&depth=0").1, #"{"error":"depth must be a whole number from 1 to 32, not \"0\""}"#)
        let stream = try request("GET", "/cut.json?ns=demo&depth=1", headers: ["Accept": "text/event-stream"])
        XCTAssertEqual(stream.0, 400)
        XCTAssertEqual(stream.1, #"{"error":"depth=N streams a window: give orderBy with limitToFirst, limitToLast or bounds"}"#)
    }

    /// `download=NAME` has the browser save the answer as a file, its name kept safe.
    func testDownloadNamesTheFile() throws {
        _ = try request("PUT", "/d.json?ns=demo", body: #"{"k":1}"#)
        let saved = try request("GET", "/d.json?ns=demo&download=d.json")
        XCTAssertEqual(saved.1, #"{"k":1}"#)
        XCTAssertEqual(saved.2["content-disposition"], #"attachment; filename="d.json""#)
        let odd = try request("GET", "/d.json?ns=demo&download=%22..%2Fx%22%3B.json")
        XCTAssertEqual(odd.2["content-disposition"], #"attachment; filename="_.._x__.json""#)
        let french = try request("GET", "/d.json?ns=demo&download=donn%C3%A9es.json")
        XCTAssertEqual(french.2["content-disposition"], #"attachment; filename="donn_es.json"; filename*=UTF-8''donn%C3%A9es.json"#)
    }

    func testBadPortIsAUsageError() throws {
        let result = try Binary.run(["serve", "--port", "99999", "--data", folder])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.hasPrefix("rtdb serve: Error: --port must be between 0 and 65535 (0 picks a free port), not 99999"), result.stderr)
    }

    func testShutdownIsCleanAndDurable() throws {
        _ = try request("PUT", "/kept.json?ns=demo", body: #""yes""#)
        kill(server.processIdentifier, SIGTERM)
        server.waitUntilExit()
        XCTAssertEqual(server.terminationStatus, 0)
        let reopened = try Binary.run(["--data", folder + "/demo", "get", "/kept"])
        XCTAssertEqual(reopened.stdout, "\"yes\"\n")
    }
}
