"""Resident memory of rtdb serve under connection churn and unread listeners.

    python3 Benchmarks/soak.py RTDB_BINARY [CYCLES] [LISTENERS]

Prints the server's resident memory before and after CYCLES WebSocket connect/listen/close
cycles, and while and after LISTENERS listeners that never read are fed 1 MB writes until
the server disconnects them."""
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Python"))
os.environ["RTDB_BIN"] = os.path.abspath(sys.argv[1])
import wire  # noqa: E402

cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
listeners = int(sys.argv[3]) if len(sys.argv) > 3 else 20



server = wire.Server()
try:
    def cycle(n):
        for _ in range(n):
            ws = wire.WebSocket(server.port, namespace="soak")
            ws.hello()
            ws.send('{"t":"d","d":{"r":1,"a":"q","b":{"p":"/s","h":""}}}')
            ws.response(1)
            ws.close()

    cycle(100)
    time.sleep(0.5)
    before = server.rss_kb()
    start = time.time()
    cycle(cycles)
    elapsed = time.time() - start
    time.sleep(0.5)
    after = server.rss_kb()
    print(f"soak: {cycles} WebSocket connect/listen/close cycles in {elapsed:.1f} s: resident {before // 1024} MB before, "
          f"{after // 1024} MB after ({(after - before) * 1024 / cycles:+.0f} bytes per connection), "
          f"{server.descriptors()} descriptors, {server.threads()} threads")

    for round in (1, 2):
        stalled = []
        for _ in range(listeners):
            ws = wire.WebSocket(server.port, namespace="stall")
            ws.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            ws.send('{"t":"d","d":{"r":1,"a":"q","b":{"p":"/feed","h":""}}}')
            stalled.append(ws)
        writer = wire.WebSocket(server.port, namespace="stall")
        writer.hello()
        base = server.rss_kb()
        seen = server.log().count("waiting for its peer to read")
        chunk = "w" * 1_000_000
        writes = 0
        start = time.time()
        while server.log().count("waiting for its peer to read") - seen < listeners and writes < 2000:
            writer.send(json.dumps({"t": "d", "d": {"r": writes + 2, "a": "p", "b": {"p": f"/feed/{writes % 8}", "d": chunk}}}))
            writer.response(writes + 2)
            writes += 1
        disconnected = server.log().count("waiting for its peer to read") - seen
        peak = server.rss_kb("VmHWM")
        for ws in stalled:
            ws.close()
        writer.close()
        time.sleep(11)  # the server gives freed memory back every 10 s
        print(f"soak: round {round}: {listeners} listeners that never read, fed {writes} writes of 1 MB in {time.time() - start:.1f} s: "
              f"{disconnected} disconnected by the server; resident {base // 1024} MB before, peak {peak // 1024} MB, "
              f"{server.rss_kb() // 1024} MB after")
finally:
    server.stop()
