"""rtdb serve under hostile input: each bad request gets an answer (or its connection is
closed), and the server goes on serving everybody else. Driven byte by byte."""
import json
import os
import socket
import time

import pytest

from wire import Server, WebSocket, http, request, wait_until


@pytest.fixture(scope="module")
def srv():
    server = Server("--request-timeout", "2")
    yield server
    server.stop()


def still_serving(srv):
    """The server is alive and a normal client is served."""
    assert srv.alive(), srv.log()[-2000:]
    status, _, body = request(srv.port, "PUT", "/health/check.json?ns=hostile", b"1")
    assert (status, body) == (200, b"1")


@pytest.mark.parametrize("query", ["?=", "?==", "?=x&=y", "?&&", "?%ff=%fe", "?ns"])
def test_empty_and_odd_parameter_names(srv, query):
    status, _, _ = request(srv.port, "GET", "/a.json" + query)
    assert status in (200, 400, 404)
    ws = WebSocket(srv.port, namespace="hostile" + query.replace("?", "&"))
    ws.close()
    still_serving(srv)


@pytest.mark.parametrize("number", ["1e300", "-1e300", "9.3e18", "-9.3e18", "1.5"])
def test_numbers_that_are_not_integers(srv, number):
    ws = WebSocket(srv.port)
    ws.hello()
    for text in [
        '{"t":"d","d":{"r":N,"a":"p","b":{"p":"/x","d":1}}}',
        '{"t":"d","d":{"r":1,"a":"q","b":{"p":"/x","t":N,"h":""}}}',
        '{"t":"d","d":{"r":2,"a":"n","b":{"p":"/x","t":N}}}',
        '{"t":"d","d":{"r":3,"a":"s","b":{"c":{"a":N}}}}',
        '{"t":"d","d":{"r":4,"a":"q","b":{"p":"/x","q":{"l":N},"h":""}}}',
        '{"t":"c","d":{"t":"h","d":{"ts":N,"v":"5","h":"x","s":"y"}}}',
        '{"t":"d","d":{"r":N,"b":{"s":"ok","d":""}}}',
    ]:
        ws.send(text.replace("N", number))
    ws.send('{"t":"d","d":{"r":9,"a":"p","b":{"p":"/after","d":2}}}')
    assert ws.response(9)["s"] == "ok", "the connection still works"
    ws.close()
    still_serving(srv)


def test_get_answers_null_and_honours_queries(srv):
    ws = WebSocket(srv.port)
    ws.hello()
    ws.send('{"t":"d","d":{"r":1,"a":"g","b":{"p":"/nothing/here","q":{}}}}')
    assert ws.response(1) == {"s": "ok", "d": None}
    ws.send('{"t":"d","d":{"r":2,"a":"p","b":{"p":"/list","d":{"a":{"x":3},"b":{"x":1},"c":{"x":2}}}}}')
    assert ws.response(2) == {"s": "ok", "d": ""}
    ws.send('{"t":"d","d":{"r":3,"a":"g","b":{"p":"/list","q":{"i":"x","l":2,"vf":"l"}}}}')
    assert ws.response(3) == {"s": "ok", "d": {"b": {"x": 1}, "c": {"x": 2}}}
    # setPriority: a put at PATH/.priority.
    ws.send('{"t":"d","d":{"r":4,"a":"p","b":{"p":"/list/a/.priority","d":7}}}')
    assert ws.response(4)["s"] == "ok"
    status, _, body = request(srv.port, "GET", "/list/a.json?ns=hostile&format=export")
    assert json.loads(body) == {".priority": 7, "x": 3}
    assert "malformed" not in srv.log().split("/list/a/.priority")[-1][:200]
    ws.close()


def test_increment_that_overflows_is_refused_and_nothing_is_lost(srv):
    assert request(srv.port, "PUT", "/big.json?ns=overflow", b"1.7e308")[0] == 200
    status, _, body = request(srv.port, "PUT", "/big.json?ns=overflow", b'{".sv":{"increment":1.7e308}}')
    assert status == 400 and b"overflows" in body
    assert request(srv.port, "PUT", "/after.json?ns=overflow", b"true")[0] == 200
    assert json.loads(request(srv.port, "GET", "/.json?ns=overflow")[2]) == {"after": True, "big": 1.7e308}


def test_invalid_utf8_is_refused(srv):
    status, _, body = request(srv.port, "PUT", "/utf.json?ns=hostile", b'"caf\xe9"')
    assert status == 400 and b"UTF-8" in body
    status, _, _ = request(srv.port, "PUT", "/utf.json?ns=hostile", b'{"k\xff": 1}')
    assert status == 400
    assert request(srv.port, "GET", "/utf.json?ns=hostile")[2] == b"null"
    ws = WebSocket(srv.port)
    ws.hello()
    ws.send_frame(b'{"t":"d","d":{"r":1,"a":"p","b":{"p":"/utf","d":"\xc3\x28"}}}')
    with pytest.raises(ConnectionError, match="1007"):
        ws.message()
    still_serving(srv)


def test_deep_nesting_under_priority_is_an_error(srv):
    deep = '{".priority":' * 60_000 + "1" + "}" * 60_000
    status, _, body = request(srv.port, "PUT", "/deep.json?ns=hostile", deep.encode())
    assert status == 400 and b"levels deep" in body
    ws = WebSocket(srv.port)
    ws.hello()
    ws.send('{"t":"d","d":{"r":1,"a":"p","b":{"p":"/deep","d":' + deep + "}}}")
    assert ws.response(1)["s"] == "invalid_request"
    ws.close()
    still_serving(srv)


def test_huge_limits_are_refused_or_saturate(srv):
    request(srv.port, "PUT", "/l.json?ns=hostile", b'{"a":1,"b":2,"c":3}')
    status, _, body = request(srv.port, "GET", '/l.json?ns=hostile&orderBy="$key"&startAfter="a"&limitToFirst=9223372036854775807')
    assert status == 400 and b"at most 2147483647" in body
    status, _, body = request(srv.port, "GET", '/l.json?ns=hostile&orderBy="$key"&startAfter="a"&limitToFirst=2147483647')
    assert (status, json.loads(body)) == (200, {"b": 2, "c": 3})
    still_serving(srv)


def test_long_unterminated_bound_is_an_error(srv):
    bound = "%22" + "a" * 78_000
    status, _, body = request(srv.port, "GET", f"/x.json?ns=hostile&orderBy=%22$key%22&startAt={bound}")
    assert status == 400 and b"startAt must be" in body


def test_message_limits_close_the_connection(srv):
    ws = WebSocket(srv.port)
    ws.hello()
    ws.send_frame("999999")  # a count frame announcing far too many parts
    with pytest.raises(ConnectionError, match="1009"):
        for _ in range(5):
            ws.message()
    ws = WebSocket(srv.port)
    ws.hello()
    ws.send_frame("2000")
    piece = "x" * 16384
    with pytest.raises((ConnectionError, OSError)):
        for _ in range(2000):
            ws.send_frame(piece)
        ws.message()
    ws = WebSocket(srv.port)
    ws.hello()
    with pytest.raises((ConnectionError, OSError)):
        ws.send_frame("x" * (17 << 20))  # one frame over the limit
        ws.message()
    still_serving(srv)


def test_a_write_of_16_mb_is_accepted(srv):
    value = "y" * (10 << 20)
    ws = WebSocket(srv.port)
    ws.hello()
    text = json.dumps({"t": "d", "d": {"r": 1, "a": "p", "b": {"p": "/large", "d": {"a": value, "b": value[: 5 << 20]}}}})
    parts = [text[i:i + 16384] for i in range(0, len(text), 16384)]
    ws.send_frame(str(len(parts)))
    for part in parts:
        ws.send_frame(part)
    assert ws.response(1) == {"s": "ok", "d": ""}
    ws.send('{"t":"d","d":{"r":2,"a":"p","b":{"p":"/large","d":null}}}')
    assert ws.response(2)["s"] == "ok"
    ws.close()


def test_an_answer_larger_than_the_outbound_budget_arrives_whole(srv):
    """One answer may be larger than what a slow reader may leave waiting (32 MiB)."""
    big = ("b" * (9 << 20)).encode()
    for i in range(4):
        assert request(srv.port, "PUT", f"/huge/k{i}.json?ns=big&print=silent", b'"' + big + b'"')[0] == 204
    status, headers, body = request(srv.port, "GET", "/huge.json?ns=big")
    assert status == 200 and len(body) == int(headers["content-length"]) > 36 << 20
    request(srv.port, "DELETE", "/huge.json?ns=big")
    still_serving(srv)


def test_pages_from_other_sites_are_refused(srv):
    request(srv.port, "PUT", "/precious.json?ns=web", b'"keep me"')
    # A plain cross-site form post, no preflight: refused, data intact.
    status, headers, body = request(srv.port, "POST", "/.json?ns=web&x-http-method-override=DELETE", b"",
                                    {"Origin": "http://evil.example", "Content-Type": "text/plain"})
    assert status == 403 and b"--allow-origin http://evil.example" in body
    assert "access-control-allow-origin" not in headers
    assert request(srv.port, "GET", "/precious.json?ns=web")[2] == b'"keep me"'
    assert "--allow-origin http://evil.example" in srv.log()
    # A WebSocket from another site.
    ws = WebSocket(srv.port, namespace="web", headers={"Origin": "http://evil.example"})
    assert ws.status == 403
    ws.close()
    # DNS rebinding: a foreign Host is refused and creates nothing.
    status, _, body = request(srv.port, "GET", "/.json", host="attacker.example:9000")
    assert status == 403 and b"--allow-host attacker.example" in body
    assert not os.path.exists(os.path.join(srv.data, "attacker"))
    # Pages served from this machine, and programs, keep working.
    status, headers, body = request(srv.port, "GET", "/precious.json?ns=web", headers={"Origin": "http://localhost:5173"})
    assert status == 200 and headers["access-control-allow-origin"] == "http://localhost:5173"
    status, headers, _ = request(srv.port, "OPTIONS", "/precious.json?ns=web",
                                 headers={"Origin": "http://127.0.0.1:3000", "Access-Control-Request-Method": "PUT"})
    assert status == 204 and "PUT" in headers["access-control-allow-methods"]
    ws = WebSocket(srv.port, namespace="web", headers={"Origin": "http://localhost:5173"})
    assert ws.status == 101
    ws.close()
    assert request(srv.port, "GET", "/precious.json", host="web.localhost:1")[2] == b'"keep me"'


def test_allow_origin_widens_the_policy():
    server = Server("--allow-origin", "https://app.example", "--allow-host", "db.example")
    try:
        status, headers, _ = request(server.port, "GET", "/.json?ns=x", headers={"Origin": "https://app.example"}, host="db.example")
        assert status == 200 and headers["access-control-allow-origin"] == "https://app.example"
        assert request(server.port, "GET", "/.json?ns=x", headers={"Origin": "https://other.example"})[0] == 403
    finally:
        server.stop()


def test_reads_of_unknown_namespaces_create_nothing(srv):
    before = set(os.listdir(srv.data))
    for i in range(200):
        assert request(srv.port, "GET", f"/a.json?ns=ghost{i}")[2] == b"null"
    assert set(os.listdir(srv.data)) == before
    assert srv.threads() < 40, srv.threads()


def test_websocket_upgrade_after_a_rest_request_on_the_same_connection(srv):
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    sock.sendall(f"GET /a.json?ns=hostile HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n\r\n".encode())
    from wire import read_response
    assert read_response(sock)[0] == 200
    ws = WebSocket(srv.port, sock=sock)
    assert ws.status == 101
    ws.hello()
    ws.send('{"t":"d","d":{"r":1,"a":"g","b":{"p":"/a","q":{}}}}')
    assert ws.response(1)["s"] == "ok"
    ws.close()


def test_slow_and_idle_requests_time_out(srv):
    partial = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    partial.sendall(b"GET /a.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    slow_body = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    slow_body.sendall(b"PUT /a.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
    idle = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    start = time.time()
    from wire import read_response
    assert read_response(partial)[0] == 408
    assert read_response(slow_body)[0] == 408
    assert idle.recv(10) == b""  # closed: an idle keep-alive connection
    assert time.time() - start < 9
    still_serving(srv)


def test_frames_of_a_long_message_are_never_interleaved(srv):
    """Many long pushes to a listener while its own writes are acknowledged: every count
    frame is followed by exactly its parts."""
    listener = WebSocket(srv.port, namespace="frames")
    listener.hello()
    listener.send('{"t":"d","d":{"r":1,"a":"q","b":{"p":"/big","h":""}}}')
    writer = WebSocket(srv.port, namespace="frames")
    writer.hello()
    big = "z" * 40000
    for i in range(30):
        writer.send(json.dumps({"t": "d", "d": {"r": 100 + i, "a": "p", "b": {"p": f"/big/{i}", "d": big}}}))
        listener.send(json.dumps({"t": "d", "d": {"r": 100 + i, "a": "p", "b": {"p": f"/small/{i}", "d": i}}}))
    acks, pushes = 0, 0
    while acks < 30 or pushes < 30:
        m = listener.message()  # raises if the parts of a message were split by another
        if m["d"].get("r", 0) >= 100:
            acks += 1
        elif m["d"].get("a") == "d" and m["d"]["b"]["p"].startswith("big/"):
            pushes += 1
    listener.close()
    writer.close()


def test_a_listener_that_never_reads_is_disconnected(srv):
    # Anonymous memory: pages of the mapped node file that the writes were read back from
    # are the data's page cache, not memory held for the listener.
    before = srv.rss_kb("RssAnon")
    stalled = WebSocket(srv.port, namespace="stall")
    stalled.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.send('{"t":"d","d":{"r":1,"a":"q","b":{"p":"/feed","h":""}}}')
    writer = WebSocket(srv.port, namespace="stall")
    writer.hello()
    chunk = "w" * 1_000_000
    for i in range(80):
        writer.send(json.dumps({"t": "d", "d": {"r": i + 1, "a": "p", "b": {"p": f"/feed/{i % 4}", "d": chunk}}}))
        writer.response(i + 1)
    assert wait_until(lambda: "waiting for its peer to read" in srv.log(), 20), srv.log()[-2000:]
    writer.close()
    stalled.close()
    still_serving(srv)
    # What was waiting for it goes back to the system (the server's allocator returns it). The
    # engine's share (the records since its last checkpoint) goes too: an idle store
    # checkpoints after 5 s, so what is left to measure is the listener's.
    assert wait_until(lambda: srv.rss_kb("RssAnon") < before + 24_000, 25), (before, srv.rss_kb("RssAnon"))


def test_connect_close_soak_memory_is_bounded(srv):
    """Connections come and go; what they used is given back."""
    def cycle(n):
        for _ in range(n):
            ws = WebSocket(srv.port, namespace="soak")
            ws.hello()
            ws.send('{"t":"d","d":{"r":1,"a":"q","b":{"p":"/s","h":""}}}')
            ws.response(1)
            ws.close()
    cycle(200)
    time.sleep(0.5)
    before = srv.rss_kb()
    cycle(1000)
    time.sleep(0.5)
    after = srv.rss_kb()
    # 4 KB leaked per connection would be 4 MB here.
    assert after - before < 3000, (before, after)
    assert srv.descriptors() < 64


def test_damaged_namespace_is_refused_without_paths_and_recovered(tmp_path):
    import subprocess
    from wire import BINARY
    data = str(tmp_path / "data")
    server = Server(data=data)
    for i in range(50):
        assert request(server.port, "PUT", f"/k{i}.json?ns=hurt", str(i).encode())[0] == 200
    # Killed, the server leaves its log as it was (a clean stop would checkpoint it).
    server.process.kill()
    server.process.wait(timeout=60)
    wal = os.path.join(data, "hurt", "wal-0000000001.log")
    damaged = bytearray(open(wal, "rb").read())
    damaged[20] ^= 0x01
    open(wal, "wb").write(damaged)

    server = Server(data=data)
    try:
        status, _, body = request(server.port, "GET", "/k1.json?ns=hurt")
        assert status == 404
        assert b"damaged" in body and data.encode() not in body and b"wal-" not in body
        assert wal in server.log()
        ws = WebSocket(server.port, namespace="hurt")
        with pytest.raises(ConnectionError):
            while True:
                m = ws.message()
                if m["t"] == "c" and m["d"]["t"] == "e":
                    assert data not in m["d"]["d"] and "damaged" in m["d"]["d"]
    finally:
        server.stop()
    assert open(wal, "rb").read() == bytes(damaged), "nothing was changed"

    result = subprocess.run([BINARY, "serve", "--data", data, "--recover"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "49 log records kept; left out:" in result.stdout
    assert "were moved to" in result.stdout
    server = Server(data=data)
    try:
        assert request(server.port, "GET", "/k0.json?ns=hurt")[2] == b"null"
        assert request(server.port, "GET", "/k49.json?ns=hurt")[2] == b"49"
    finally:
        server.stop()


def test_damaged_head_is_rebuilt_from_its_copy_or_refused_without_paths(tmp_path):
    import subprocess
    from wire import BINARY
    data = str(tmp_path / "data")
    server = Server(data=data)
    for i in range(5):
        assert request(server.port, "PUT", f"/k{i}.json?ns=hurt", str(i).encode())[0] == 200
    server.stop()  # a clean stop checkpoints: the tree is in the node file, named by HEAD
    head, copy = os.path.join(data, "hurt", "HEAD"), os.path.join(data, "hurt", "HEAD.copy")
    assert open(head, "rb").read() == open(copy, "rb").read()
    whole = open(head, "rb").read()
    damaged = bytearray(whole)
    damaged[30] ^= 0x01
    open(head, "wb").write(damaged)

    result = subprocess.run([BINARY, "serve", "--data", data, "--recover"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert f"{head} (damaged at byte " in result.stdout and "was rebuilt from its copy, HEAD.copy" in result.stdout, result.stdout
    # Salvage copies the tree whole to a new node file, named by a new head and its copy.
    assert open(head, "rb").read() == open(copy, "rb").read() != whole
    server = Server(data=data)
    try:
        assert request(server.port, "GET", "/k4.json?ns=hurt")[2] == b"4"
    finally:
        server.stop()

    # Both damaged: the client is told, without the server's paths, and nothing is changed.
    open(head, "wb").write(damaged)
    open(copy, "wb").write(b"garbage")
    server = Server(data=data)
    try:
        status, _, body = request(server.port, "GET", "/k1.json?ns=hurt")
        assert status == 404
        assert body == b'{"error":"the database \\"hurt\\" is damaged and cannot be opened or salvaged; the server\'s log says where"}', body
        assert "restore it from a backup" in server.log()
    finally:
        server.stop()
    assert open(head, "rb").read() == bytes(damaged) and open(copy, "rb").read() == b"garbage"


def test_out_of_descriptors_the_server_neither_spins_nor_dies():
    server = Server("--request-timeout", "2", descriptors=64)
    try:
        held = []
        for _ in range(120):  # more than it can accept: the rest wait in the backlog
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            s.sendall(b"GET /a.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX: ")
            held.append(s)
        assert wait_until(lambda: "cannot accept connections" in server.log(), 5)
        before = server.cpu_ticks()
        time.sleep(1)  # a second of being out of descriptors, measured
        assert server.cpu_ticks() - before < 30, "the server spins on accept"
        for s in held:
            s.close()
        def served():
            try:
                return request(server.port, "GET", "/a.json?ns=x")[0] == 200
            except OSError:
                return False
        assert wait_until(served, 15)
        assert server.alive()
    finally:
        server.stop()
