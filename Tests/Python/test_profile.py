"""The profiler's stream of `rtdb serve` (/.settings/profile.json), read as
`firebase database:profile` reads it, while the official firebase-admin SDK works on the
namespace."""
import json
import socket

from wire import Server, admin_app, request

OWNER = {"Authorization": "Bearer owner"}


def open_profile(port, namespace):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(f"GET /.settings/profile.json?ns={namespace} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              "Authorization: Bearer owner\r\nAccept: text/event-stream\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        assert chunk, head
        head += chunk
    return s, head.decode()


class Body:
    """A chunked response body, read as it comes."""

    def __init__(self, s):
        self.s, self.raw, self.text = s, b"", b""

    def more(self):
        while True:
            if b"\r\n" in self.raw:
                size, rest = self.raw.split(b"\r\n", 1)
                length = int(size, 16)
                if len(rest) >= length + 2:
                    self.text += rest[:length]
                    self.raw = rest[length + 2:]
                    return
            chunk = self.s.recv(4096)
            assert chunk, (self.raw, self.text)
            self.raw += chunk


def read_events(body, count):
    """The next `count` `log` events' data, as the profiler's report reads them."""
    records = []
    while len(records) < count:
        while b"\n\n" not in body.text:
            body.more()
        event, body.text = body.text.split(b"\n\n", 1)
        lines = event.decode().split("\n")
        if lines[0] == "event: log":
            assert len(lines) == 2 and lines[1].startswith("data: "), event
            records.append(json.loads(lines[1][len("data: "):]))
    return records


def fixed(record):
    """What does not change from run to run."""
    out = {k: v for k, v in record.items() if k not in ("timestamp", "millis", "micros", "client")}
    client = record.get("client")
    if client:
        out["client"] = {"id": "rest" if client["id"] == "rest" else "conn", "user": client["user"],
                         "owner": client.get("owner", False), "local": client["remoteAddress"].startswith("127.0.0.1:")}
    assert isinstance(record["timestamp"], (int, float)) and abs(record["millis"] * 1000 - record["micros"]) < 0.5
    return out


def test_profile_stream_shows_firebase_admin_operations():
    from firebase_admin import db

    server = Server()
    try:
        with admin_app(server.port, "profiled") as app:
            s, head = open_profile(server.port, "profiled")
            assert head.startswith("HTTP/1.1 200 OK\r\n") and "content-type: text/event-stream" in head.lower(), head
            ref = db.reference("/items", app=app)
            ref.set({"a": 1})
            assert ref.get() == {"a": 1}
            ref.update({"b": 2})
            ref.child("a").delete()
            assert "transfer-encoding: chunked" in head.lower(), head
            records = [fixed(r) for r in read_events(Body(s), 4)]
            admin = {"id": "rest", "user": None, "owner": True, "local": True}
            assert records == [
                # A write's bytes are its body's as sent ({"a": 1}); a read's its answer's.
                {"name": "rest-write", "path": ["items"], "bytes": 8, "client": admin, "allowed": True},
                {"name": "rest-read", "path": ["items"], "bytes": 7, "client": admin, "allowed": True},
                {"name": "rest-update", "path": ["items"], "bytes": 8, "client": admin, "allowed": True},
                {"name": "rest-write", "path": ["items", "a"], "bytes": 0, "client": admin, "allowed": True},
            ], records
            s.close()
    finally:
        server.stop()


def test_profile_stream_is_the_owners():
    server = Server()
    try:
        target = "/.settings/profile.json?ns=p"
        stream = {"Accept": "text/event-stream"}
        assert request(server.port, "GET", target, headers=stream)[::2] == \
            (401, b'{"error":"Permission denied: only the owner may profile the database"}')
        assert request(server.port, "GET", target, headers=OWNER)[::2] == \
            (400, b'{"error":"the profile is a stream of Server-Sent Events: ask with Accept: text/event-stream"}')
        assert request(server.port, "POST", target, headers={**OWNER, **stream})[::2] == \
            (405, b'{"error":"the profile is read with GET"}')
        assert request(server.port, "GET", "/.settings/profile.json?ns=a.b", headers={**OWNER, **stream})[::2] == \
            (404, b'{"error":"invalid namespace \\"a.b\\""}')
    finally:
        server.stop()
