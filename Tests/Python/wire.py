"""A minimal client for driving `rtdb serve` byte by byte: raw HTTP, and WebSocket frames
built by hand, so tests can send exactly what a hostile or broken peer would."""
import base64
import contextlib
import json
import os
import re
import socket
import struct
import subprocess
import tempfile
import threading
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("RTDB_BIN", os.path.join(ROOT, ".build", "debug", "rtdb"))


class Server:
    """`rtdb serve` on a free port, with its log collected."""

    def __init__(self, *arguments, data=None, descriptors=None):
        self.data = data or tempfile.mkdtemp(prefix="rtdb-hostile-")
        self.log_file = tempfile.NamedTemporaryFile(prefix="rtdb-serve-log-", delete=False)
        def limit():
            if descriptors:
                import resource
                resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))
        self.process = subprocess.Popen([BINARY, "serve", "--port", "0", "--data", self.data, *arguments],
                                        stdout=subprocess.PIPE, stderr=self.log_file, text=True, preexec_fn=limit)
        line = self.process.stdout.readline()
        match = re.search(r"127\.0\.0\.1:(\d+) ", line)
        assert match, f"rtdb serve did not say where it listens: {line!r}"
        self.port = int(match.group(1))

    def log(self):
        with open(self.log_file.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def alive(self):
        return self.process.poll() is None

    def rss_kb(self, field="VmRSS"):
        """Resident memory now (or, with field="VmHWM", its peak so far), in KB."""
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    def cpu_ticks(self):
        fields = open(f"/proc/{self.process.pid}/stat").read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def threads(self):
        return len(os.listdir(f"/proc/{self.process.pid}/task"))

    def descriptors(self):
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=60)


def http(port, raw, timeout=10):
    """Sends raw request bytes; returns (status, headers, body) of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(raw)
        return read_response(s)


def read_response(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    if b"\r\n\r\n" not in data:
        return 0, {}, data
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body


def request(port, method, target, body=b"", headers=None, host=None):
    headers = dict(headers or {})
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", "Connection: close",
             f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return http(port, ("\r\n".join(lines) + "\r\n\r\n").encode() + body)


class WebSocket:
    """A realtime connection with frames made by hand."""

    def __init__(self, port, namespace="hostile", headers=None, sock=None, timeout=10):
        self.sock = sock or socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET /.ws?ns={namespace}&v=5 HTTP/1.1", f"Host: 127.0.0.1:{port}", "Upgrade: websocket",
                 "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.sock.recv(1)
            if not chunk:
                break
            data += chunk
        self.status = int(data.split(b" ", 2)[1]) if data else 0
        self.buffer = b""

    def send_frame(self, payload, opcode=1):
        if isinstance(payload, str):
            payload = payload.encode()
        mask = os.urandom(4)
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.sock.sendall(header + mask + _mask(payload, mask))

    def send(self, message):
        self.send_frame(json.dumps(message, separators=(",", ":")) if not isinstance(message, (str, bytes)) else message)

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("closed")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def frame(self):
        """(opcode, payload) of the next frame."""
        b0, b1 = self._read(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._read(8))[0]
        return b0 & 0x0F, self._read(n)

    def message(self):
        """The next whole realtime message (count frames joined), as JSON."""
        while True:
            opcode, payload = self.frame()
            if opcode == 8:
                raise ConnectionError(f"closed by the server: {close_reason(payload)}")
            if opcode != 1:
                continue
            text = payload.decode()
            if text.isdigit() and len(text) <= 6:
                parts = [self.frame()[1].decode() for _ in range(int(text))]
                text = "".join(parts)
            return json.loads(text)

    def response(self, request_id):
        """Skips pushes until the answer to `request_id`."""
        while True:
            m = self.message()
            if m.get("t") == "d" and m["d"].get("r") == request_id:
                return m["d"]["b"]

    def hello(self):
        m = self.message()
        assert m["t"] == "c" and m["d"]["t"] == "h", m
        return m

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def close_reason(payload):
    if len(payload) < 2:
        return (None, "")
    return (struct.unpack(">H", payload[:2])[0], payload[2:].decode(errors="replace"))


def _mask(payload, mask):
    """XOR with the repeated mask, done on whole integers (fast for large frames)."""
    if not payload:
        return b""
    key = (mask * (len(payload) // 4 + 1))[:len(payload)]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(len(payload), "big")


def wait_until(predicate, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@contextlib.contextmanager
def admin_app(port, namespace):
    """The official firebase-admin SDK pointed at `rtdb serve` on `port` for `namespace`, as an
    application would be (FIREBASE_DATABASE_EMULATOR_HOST), and put back as it was after."""
    import firebase_admin
    previous = os.environ.get("FIREBASE_DATABASE_EMULATOR_HOST")
    os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = f"127.0.0.1:{port}"
    app = firebase_admin.initialize_app(options={"databaseURL": f"https://{namespace}.firebaseio.com"},
                                        name=namespace + "-" + uuid.uuid4().hex)
    try:
        yield app
    finally:
        firebase_admin.delete_app(app)
        if previous is None:
            os.environ.pop("FIREBASE_DATABASE_EMULATOR_HOST", None)
        else:
            os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = previous


def event_collector(enough):
    """A firebase-admin listener's callback that keeps each event as (type, path, data), with
    the list it fills and an Event set once `enough` have come."""
    events = []
    arrived = threading.Event()

    def on_event(event):
        events.append((event.event_type, event.path, event.data))
        if len(events) >= enough:
            arrived.set()

    return events, arrived, on_event


def close_listener(registration, wake):
    """Closes a firebase-admin listener. The SDK's close() waits for the stream's next bytes (a
    keep-alive comes every 30 s): a write to the reference `wake` sends some at once."""
    closer = threading.Thread(target=registration.close)
    closer.start()
    time.sleep(0.2)
    wake.set(True)
    closer.join(10)
