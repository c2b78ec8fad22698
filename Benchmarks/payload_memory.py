"""Peak memory of rtdb serve per byte written, for large writes.

    python3 Benchmarks/payload_memory.py RTDB_BINARY

For each payload (a REST PUT of an array of small numbers, of objects, of long strings, and
a realtime write of an array), prints the payload size, the server's peak resident memory
above its idle level, and their ratio. The peak is read 2 s after the answer (SETTLE=seconds to
change it), so that the checkpoint a large write sets off counts too."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Python"))
os.environ["RTDB_BIN"] = os.path.abspath(sys.argv[1])
import wire  # noqa: E402



def compact(value):
    return json.dumps(value, separators=(",", ":"))


numbers = compact(list(range(2_600_000)))
payloads = {
    "REST PUT, array of 2.6M small numbers": ("rest", numbers),
    "REST PUT, array of 2.6M small numbers, answer echoed": ("rest-echo", numbers),
    "REST PUT, 300k objects of 2 fields": ("rest", compact({f"k{i}": {"name": "x" * 20, "n": i} for i in range(300_000)})),
    "REST PUT, 16k strings of 1 KB": ("rest", compact({f"k{i}": "v" * 1000 for i in range(16_000)})),
    "WebSocket write, array of 1.2M small numbers": ("ws", compact(list(range(1_200_000)))),
}
for name, (kind, text) in payloads.items():
    server = wire.Server()
    try:
        idle = server.rss_kb("VmHWM")
        start = time.time()
        if kind.startswith("rest"):
            query = "" if kind == "rest-echo" else "&print=silent"
            status = wire.request(server.port, "PUT", "/big.json?ns=m" + query, text.encode())[0]
            size = len(text)
        else:
            message = '{"t":"d","d":{"r":1,"a":"p","b":{"p":"/big","d":' + text + "}}}"
            ws = wire.WebSocket(server.port, namespace="m")
            ws.hello()
            parts = [message[i:i + 16384] for i in range(0, len(message), 16384)]
            ws.send_frame(str(len(parts)))
            for part in parts:
                ws.send_frame(part)
            status = ws.response(1)["s"]
            size = len(message)
        elapsed = time.time() - start
        time.sleep(float(os.environ.get("SETTLE", "2")))
        peak = server.rss_kb("VmHWM") - idle
        print(f"memory: {name}: {size / 1e6:.1f} MB written ({status}) in {elapsed:.2f} s, "
              f"server peak +{peak // 1024} MB = {peak * 1024 / size:.1f}x the payload")
    finally:
        server.stop()
