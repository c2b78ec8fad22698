"""A watched query on `rtdb serve` sees every window that writes sent back to back pass
through, as Firebase's server and emulator send them: the official SDK's test "Cache doesn't
remove items that have fallen out of view" waits for each. Exact frames, many rounds: a
window skipped in a burst shows up only now and then."""
import json
import time

import pytest

from wire import Server, WebSocket

ROUNDS = 200
# Every round together, however slow the machine: a frame that never comes fails at once
# (the sockets' own timeout), and the rounds stop here in any case.
DEADLINE_SECONDS = 120


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.stop()


def frame(message):
    return json.dumps(message, separators=(",", ":"))


def connect(server):
    ws = WebSocket(server.port, namespace="windows")
    ws.hello()
    return ws


def listen(ws, request, path, query, tag):
    """Listens with a query; returns the first data frame, read up to the listen's ok."""
    ws.send({"t": "d", "d": {"r": request, "a": "q", "b": {"p": path, "q": query, "t": tag, "h": ""}}})
    first = ws.frame()[1].decode()
    assert json.loads(ws.frame()[1]) == {"t": "d", "d": {"r": request, "b": {"s": "ok", "d": ""}}}
    return first


def burst(ws, writes):
    """Sends every write in one go, as a client that does not wait for acknowledgements."""
    frames = b""
    for request, (action, path, data) in enumerate(writes, start=1):
        payload = frame({"t": "d", "d": {"r": request, "a": action, "b": {"p": path, "d": data}}}).encode()
        assert len(payload) < 1 << 16
        length = bytes([0x80 | len(payload)]) if len(payload) < 126 else bytes([0x80 | 126]) + len(payload).to_bytes(2, "big")
        frames += b"\x81" + length + b"\0\0\0\0" + payload  # a zero mask leaves the payload as it is
    ws.sock.sendall(frames)
    for request in range(1, len(writes) + 1):
        assert ws.response(request) == {"s": "ok", "d": ""}


def pushes(ws, count):
    return [ws.frame()[1].decode() for _ in range(count)]


def data(path, value, tag):
    return frame({"t": "d", "d": {"a": "d", "b": {"p": path, "d": value, "t": tag}}})


def merge(path, values, tag):
    return frame({"t": "d", "d": {"a": "m", "b": {"p": path, "d": values, "t": tag}}})


def test_limit_to_last_sees_each_window_of_a_burst(server):
    watcher, writer = connect(server), connect(server)
    deadline = time.monotonic() + DEADLINE_SECONDS
    for round in range(ROUNDS):
        assert time.monotonic() < deadline, f"round {round} of {ROUNDS}"
        q = f"q{round}"
        assert listen(watcher, round + 1, "/" + q, {"l": 2, "vf": "r"}, 1) == data(q, None, 1)
        burst(writer, [("p", f"/{q}/k{i}", i) for i in range(4)])
        assert pushes(watcher, 4) == [
            data(f"{q}/k0", 0, 1),
            data(f"{q}/k1", 1, 1),
            merge(q, {"k0": None, "k2": 2}, 1),
            merge(q, {"k1": None, "k3": 3}, 1),
        ], f"round {round}"
    watcher.close()
    writer.close()


def test_bounded_and_ordered_windows_see_each_write_of_a_burst(server):
    watcher, writer = connect(server), connect(server)
    deadline = time.monotonic() + DEADLINE_SECONDS
    for round in range(ROUNDS):
        assert time.monotonic() < deadline, f"round {round} of {ROUNDS}"
        # Named so that the multi-path update below reaches the range first, in either order.
        r, o = f"a-range{round}", f"b-ordered{round}"
        burst(writer, [("p", "/" + r, {"a": {"n": 5}, "b": {"n": 15}}),
                       ("p", "/" + o, {"a": {"s": 1}, "b": {"s": 2}, "c": {"s": 3}})])
        between = {"sp": 10, "sin": True, "ep": 20, "ein": True, "i": "n"}
        assert listen(watcher, 2 * round + 1, "/" + r, between, 1) == data(r, {"b": {"n": 15}}, 1)
        assert listen(watcher, 2 * round + 2, "/" + o, {"l": 2, "vf": "r", "i": "s"}, 2) == data(o, {"b": {"s": 2}, "c": {"s": 3}}, 2)
        burst(writer, [
            ("p", f"/{r}/a/n", 12),                      # into the range
            ("p", f"/{r}/b/n", 25),                      # out of it
            ("m", "/", {f"{r}/a/n": 30, f"{r}/c": {"n": 11}, f"{o}/a/s": 9}),  # one out, one in; a to the top
            ("p", f"/{o}/c/s", 0),                       # out of the window: b comes back in
        ])
        assert pushes(watcher, 5) == [
            data(f"{r}/a", {"n": 12}, 1),
            data(f"{r}/b", None, 1),
            merge(r, {"a": None, "c": {"n": 11}}, 1),
            merge(o, {"b": None, "a": {"s": 9}}, 2),
            merge(o, {"c": None, "b": {"s": 2}}, 2),
        ], f"round {round}"
    watcher.close()
    writer.close()
