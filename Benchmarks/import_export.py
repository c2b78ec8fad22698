#!/usr/bin/env python3
"""Imports a generated JSON file of about 100 MB (1,000,000 leaves) into an embedded database
and into `rtdb serve`, exports it back, checks the export equals the input (parsed, so key
order and spacing do not count), and prints time and peak resident memory of each rtdb run
beside Python's own json.load of the same file, measured in the same run.

Usage: import_export.py RTDB [LEAVES]
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time


def generate(path, leaves):
    """`leaves` values: notes of ten leaves each, about 100 bytes a leaf."""
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    with open(path, "w") as f:
        f.write('{"notes": {')
        for i in range(leaves // 10):
            if i:
                f.write(", ")
            note = {
                "title": "note %d %s" % (i, rng.choice(words)),
                "body": " ".join(rng.choice(words) for _ in range(110)),
                "lastModified": 1700000000000 + i,
                "done": i % 3 == 0,
                "rank": rng.random(),
                "author": "user%d" % (i % 1000),
                "tags": {"a": rng.choice(words), "b": rng.choice(words)},
                "views": rng.randrange(100000),
                "summary": " ".join(rng.choice(words) for _ in range(20)),
            }
            f.write('"n%07d": %s' % (i, json.dumps(note)))
        f.write("}}\n")


def run(argv, **kwargs):
    """Runs argv; returns (seconds, peak resident MB, stderr)."""
    start = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.monotonic() - start
    stderr = process.stderr.read().decode()
    if status != 0:
        sys.exit("failed: %s\n%s" % (" ".join(argv), stderr))
    return seconds, usage.ru_maxrss / 1024, stderr


def same(a, b):
    with open(a) as f:
        left = json.load(f)
    with open(b) as f:
        right = json.load(f)
    return left == right


def main():
    rtdb = os.path.abspath(sys.argv[1])
    leaves = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, "in.json")
        generate(source, leaves)
        mb = os.path.getsize(source) / 1e6
        start = time.monotonic()
        with open(source) as f:
            json.load(f)
        anchor = time.monotonic() - start
        print("import/export: %.0f MB file, %d leaves; Python json.load of it: %.2f s" % (mb, leaves, anchor))

        serve = subprocess.Popen([rtdb, "serve", "--port", "0", "--data", os.path.join(work, "served")],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        port = re.search(rb"127\.0\.0\.1:(\d+) ", serve.stdout.readline()).group(1).decode()
        try:
            for name, database in [("embedded", ["--data", os.path.join(work, "db")]),
                                   ("served", ["--url", "ws://127.0.0.1:%s?ns=bench" % port])]:
                seconds, rss, _ = run([rtdb] + database + ["-c", "import /data in.json --quiet"], cwd=work)
                print("import/export: import into %s: %.1f s (%.0f MB/s, %.1fx json.load), peak resident %.0f MB"
                      % (name, seconds, mb / seconds, seconds / anchor, rss))
                out = os.path.join(work, "out-%s.json" % name)
                seconds, rss, _ = run([rtdb] + database + ["-c", "export /data %s --quiet" % out], cwd=work)
                print("import/export: export from %s: %.1f s (%.0f MB/s, %.1fx json.load), peak resident %.0f MB; equal to the input: %s"
                      % (name, seconds, mb / seconds, seconds / anchor, rss, same(source, out)))
        finally:
            serve.terminate()
            serve.wait()


if __name__ == "__main__":
    main()
