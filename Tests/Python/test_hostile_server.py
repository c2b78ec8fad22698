"""The shell against a hostile or broken server: numbers that do not fit, malformed pushes
and answers. The shell must not crash; what it can read it uses."""
import base64
import hashlib
import json
import socket
import struct
import subprocess
import threading

from wire import BINARY


def serve_once(listener, script):
    """Accepts one WebSocket client and answers its requests, sending `script(request)`'s
    frames before each answer."""
    conn, _ = listener.accept()
    conn.settimeout(20)
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(4096)
    key = [l.split(":", 1)[1].strip() for l in data.decode().split("\r\n") if l.lower().startswith("sec-websocket-key")][0]
    accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
    conn.sendall(f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n".encode())

    def send(text):
        payload = text.encode()
        n = len(payload)
        header = bytes([0x81]) + (bytes([n]) if n < 126 else bytes([126]) + struct.pack(">H", n))
        conn.sendall(header + payload)

    buffer = b""

    def read(n):
        nonlocal buffer
        while len(buffer) < n:
            chunk = conn.recv(65536)
            if not chunk:
                raise ConnectionError
            buffer += chunk
        out, buffer = buffer[:n], buffer[n:]
        return out

    send('{"t":"c","d":{"t":"h","d":{"ts":1e300,"v":"5","h":"x","s":"y"}}}')
    send('{"t":"c","d":{"t":"h","d":{"ts":1700000000000,"v":"5","h":"127.0.0.1","s":"s1"}}}')
    try:
        while True:
            b0, b1 = read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", read(8))[0]
            mask = read(4)
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(read(n)))
            if b0 & 0x0F == 8:
                return
            text = payload.decode()
            if text.isdigit():
                continue
            message = json.loads(text)
            if message.get("t") != "d" or "r" not in message["d"]:
                continue
            for frame in script(message["d"]):
                send(frame)
    except (ConnectionError, OSError):
        return


JUNK = [
    '{"t":"d","d":{"a":"d","b":{"p":"a","d":1,"t":1e300}}}',
    '{"t":"d","d":{"a":"d","b":{"p":"a","d":1,"t":-9.3e18}}}',
    '{"t":"d","d":{"r":9.3e18,"b":{"s":"ok","d":""}}}',
    '{"t":"d","d":{"r":-1e300,"b":{"s":"ok","d":""}}}',
    '{"t":"d","d":{"r":1.5,"b":{"s":"ok","d":""}}}',
    '{"t":"d","d":{"a":"m","b":{"p":"a","d":5}}}',
    '{"t":"d","d":{"a":"d","b":{"p":"a$b","d":1}}}',
    '{"t":"d","d":{"a":"d","b":{"p":"a","d":{"x":1e999}}}}',
    '{"t":"d","d":{"a":"c","b":{"p":"a","q":[{"l":1e300}]}}}',
    '{"t":"c","d":{"t":"x"}}',
    'not json',
]


def test_the_shell_survives_a_hostile_server():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]

    def script(request):
        answer = {"s": "ok", "d": "v"} if request.get("a") == "g" else {"s": "ok", "d": ""}
        return JUNK + [json.dumps({"t": "d", "d": {"r": request["r"], "b": answer}})]

    thread = threading.Thread(target=serve_once, args=(listener, script), daemon=True)
    thread.start()
    result = subprocess.run([BINARY, "--url", f"ws://127.0.0.1:{port}?ns=x", "-c", "get /a", "-c", "set /b 1"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, (result.returncode, result.stderr)
    assert result.stdout == '"v"\n'
    listener.close()
