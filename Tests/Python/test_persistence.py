"""The shell's disk cache, end to end with the real binary: writes queued while the server is
down survive the shell's exit (and a kill -9), a shell started offline answers from the cache,
and the writes land in order once the server is back."""
import json
import os
import re
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
import urllib.request

import pytest

from wire import BINARY, wait_until


class Reader:
    """Collects a stream's lines as they come."""

    def __init__(self, stream):
        self.lines = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, args=(stream,), daemon=True)
        self.thread.start()

    def _run(self, stream):
        for line in stream:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def current(self):
        with self.lock:
            return list(self.lines)

    def text(self):
        return "\n".join(self.current())


def folders():
    """A data folder for the server and an XDG_CACHE_HOME for the shells."""
    return tempfile.mkdtemp(prefix="rtdb-persist-"), tempfile.mkdtemp(prefix="rtdb-cache-")


def cache_folder(cache, port):
    """Where the shells keep the cache of ns=demo on this port."""
    return os.path.join(cache, "rtdb", f"127.0.0.1:{port}", "demo")


def serve(data, port=0):
    process = subprocess.Popen([BINARY, "serve", "--port", str(port), "--data", data],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    match = re.search(r"127\.0\.0\.1:(\d+) ", line)
    assert match, f"rtdb serve did not start: {line!r}"
    return process, int(match.group(1))


def stop(process):
    process.terminate()
    process.wait(timeout=30)


def rest(port, method, path, body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}.json?ns=demo", method=method,
                                     data=None if body is None else json.dumps(body).encode())
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


class Shell:
    """`rtdb --url` reading a script from standard input, fed line by line."""

    def __init__(self, port, cache, *arguments):
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        self.process = subprocess.Popen([BINARY, "--url", f"ws://127.0.0.1:{port}?ns=demo", *arguments],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=env)
        self.out = Reader(self.process.stdout)
        self.err = Reader(self.process.stderr)

    def send(self, *lines):
        for line in lines:
            self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def finish(self, timeout=60):
        self.process.stdin.close()
        status = self.process.wait(timeout=timeout)
        self.out.thread.join(5)
        self.err.thread.join(5)
        return status


def run(port, cache, *commands, **variables):
    env = dict(os.environ, XDG_CACHE_HOME=cache, **variables)
    arguments = [BINARY, "--url", f"ws://127.0.0.1:{port}?ns=demo"]
    for command in commands:
        arguments += ["-c", command]
    return subprocess.run(arguments, capture_output=True, text=True, env=env, timeout=60)


def events(lines):
    """The JSON event lines of a background watch."""
    return [json.loads(line) for line in lines if line.startswith("{") and '"event"' in line]


NOTES = {f"n{i}": {"text": f"note {i}", "lastModified": i} for i in range(1, 7)}
QUERY = "--orderByChild lastModified"


def test_queued_writes_survive_exit_and_a_shell_started_offline_works_from_the_cache():
    data, cache = folders()
    server, port = serve(data)
    try:
        rest(port, "PUT", "/notes", NOTES)
        # Online: a watch fills the cache with the last 4 notes.
        first = Shell(port, cache)
        first.send(f"watch /notes {QUERY} --limitToLast 4 --bg --json")
        assert wait_until(lambda: any(e.get("event") == "value" for e in events(first.out.current()))), first.out.text()
        stop(server)
        # Offline: three writes, the third to the path of the first (their order shows in the result).
        first.send('set /notes/w1 {"text": "first", "lastModified": 7}',
                   'set /notes/w2 {"text": "second", "lastModified": 8}',
                   'update /notes/w1 {"text": "third", "lastModified": 9}')
        assert first.finish() == 0, first.err.text()
        assert "offline: 3 writes stay queued in the cache and will be sent the next time rtdb connects" in first.err.text()

        # A new shell, the server still down.
        offline = run(port, cache, "get /notes/w1", "pending", f"query /notes {QUERY} --limitToLast 2", "status --json")
        assert offline.returncode == 0, offline.stderr
        assert "offline: cannot reach ws://127.0.0.1:" in offline.stderr
        assert "working from the cache, with 3 queued writes restored; reconnecting" in offline.stderr
        lines = offline.stdout.splitlines()
        assert json.loads(lines[0]) == {"text": "third", "lastModified": 9}
        assert lines[1:4] == ['1  set /notes/w1  {"lastModified":7,"text":"first"}',
                              '2  set /notes/w2  {"lastModified":8,"text":"second"}',
                              '3  update /notes/w1  {"lastModified":9,"text":"third"}']
        # Complete in the cache (the last 4 hold the last 2), with the queued writes on top.
        assert json.loads(lines[4]) == [{"key": "w2", "value": {"lastModified": 8, "text": "second"}},
                                        {"key": "w1", "value": {"lastModified": 9, "text": "third"}}]
        status = json.loads(lines[5])
        assert status["online"] is False and status["pendingWrites"] == 3
        assert status["cache"]["queuedWrites"] == 3 and status["cache"]["folder"].startswith(cache + "/rtdb/127.0.0.1:")

        # The last 6: what is cached shows at once, without a value event (the cache holds 4).
        second = Shell(port, cache)
        second.send(f"watch /notes {QUERY} --limitToLast 6 --bg --json")
        assert wait_until(lambda: len(events(second.out.current())) >= 6), second.out.text()
        time.sleep(0.5)
        seen = events(second.out.current())
        assert [e["event"] for e in seen] == ["child_added"] * 6
        assert [e["key"] for e in seen] == ["n3", "n4", "n5", "n6", "w2", "w1"]

        # The server returns: the writes land in order, the query is completed.
        server, _ = serve(data, port)
        assert wait_until(lambda: any(e["event"] == "value" for e in events(second.out.current())), timeout=30), second.out.text()
        value = [e for e in events(second.out.current()) if e["event"] == "value"][-1]
        assert sorted(value["data"]) == ["n2", "n3", "n4", "n5", "n6", "w1", "w2"][1:]
        assert rest(port, "GET", "/notes/w1") == {"text": "third", "lastModified": 9}
        assert rest(port, "GET", "/notes/w2") == {"text": "second", "lastModified": 8}
        # The server shows a write before its acknowledgement reaches the shell (that waits
        # for the log's sync): `unwatch` waits for the acknowledgements, then `pending` asks.
        second.send("unwatch 1", "pending")
        assert second.finish() == 0, second.err.text()
        assert "no writes waiting for the server" in second.out.text()
        assert "3 queued writes from an earlier session restored" not in second.err.text()
        # Nothing is sent twice by a later session.
        again = run(port, cache, "pending")
        assert again.stdout == "no writes waiting for the server\n" and again.stderr == "", again.stderr
    finally:
        stop(server)


def test_a_kill_9_in_the_middle_of_a_queued_script_loses_nothing_reported_queued():
    data, cache = folders()
    server, port = serve(data)
    # Known online once, so a later start without the server works from the cache.
    assert run(port, cache, "get /").returncode == 0
    stop(server)
    shell = Shell(port, cache)
    shell.send(*[f"set /counter/k{i:03} {i}" for i in range(1, 151)], "pending --json")
    assert wait_until(lambda: any(line.startswith("[") for line in shell.out.current()), timeout=30), shell.err.text()
    reported = json.loads(next(line for line in shell.out.current() if line.startswith("[")))
    assert len(reported) == 150
    # More writes are on their way when the shell dies.
    shell.send(*[f"set /counter/k{i:03} {i}" for i in range(151, 301)])
    shell.process.send_signal(signal.SIGKILL)
    shell.process.wait(timeout=10)

    # Queued without a credential, restored with one: the shell says the rules may see them differently.
    after = run(port, cache, "pending --json", RTDB_AUTH_TOKEN="owner")
    assert after.returncode == 0, after.stderr
    assert ("the restored writes were queued with the credential none; this shell has ID token or database secret "
            "(RTDB_AUTH_TOKEN): the server's rules may refuse them") in after.stderr, after.stderr
    kept = json.loads(after.stdout)
    assert kept[:150] == reported
    # Whatever else was kept is a prefix of what followed, in order.
    assert [w["path"] for w in kept[150:]] == [f"/counter/k{i:03}" for i in range(151, 151 + len(kept) - 150)]
    server, _ = serve(data, port)
    try:
        # Connected, it sends what was kept; its exit waits for the acknowledgements.
        landed = run(port, cache, "online")
        assert landed.returncode == 0, landed.stderr
        counter = rest(port, "GET", "/counter")
        assert len(counter) == len(kept) and counter["k150"] == 150
    finally:
        stop(server)


def test_least_recently_used_data_is_evicted_and_kept_synced_data_stays():
    data, cache = folders()
    server, port = serve(data)
    blob = "x" * 1000
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    base = [BINARY, "--cache-size", "1", "--url", f"ws://127.0.0.1:{port}?ns=demo"]
    try:
        rest(port, "PUT", "/", {"kept": {f"k{i}": blob for i in range(300)},
                                "old": {f"k{i}": blob for i in range(400)},
                                "new": {f"k{i}": blob for i in range(400)}})
        # 1.1 MB read with a 1 MB limit: the oldest read goes, the kept-synced data stays.
        filled = subprocess.run(base + ["-c", "keepsynced /kept on", "-c", "sleep 500ms", "-c", "get /old --json", "-c", "sleep 100ms",
                                        "-c", "get /new --json", "-c", "cache --json"], capture_output=True, text=True, env=env, timeout=60)
        assert filled.returncode == 0, filled.stderr
        summary = json.loads(filled.stdout.splitlines()[-1])
        assert summary["limitBytes"] == 1_000_000 and 700_000 < summary["dataBytes"] <= 800_000, summary
        # The file gives back what eviction freed (1.1 MB were written to it).
        assert os.path.getsize(os.path.join(summary["folder"], "cache.sqlite")) < 900_000
    finally:
        stop(server)
    offline = subprocess.run(base + ["-c", "get /new/k5", "-c", "get /kept/k7"], capture_output=True, text=True, env=env, timeout=60)
    assert offline.returncode == 0, offline.stderr
    assert offline.stdout == f'"{blob}"\n"{blob}"\n'
    evicted = subprocess.run(base + ["-c", "get /old/k5"], capture_output=True, text=True, env=env, timeout=60)
    assert evicted.returncode == 1 and "Client is offline" in evicted.stderr, evicted.stderr
    bad = subprocess.run([BINARY, "--cache-size", "101", "--url", f"ws://127.0.0.1:{port}?ns=demo", "status"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and "Error: --cache-size '101' is not a size in MB from 1 to 100" in bad.stderr


def test_restored_writes_are_sent_signed_in():
    data, cache = folders()
    rules = os.path.join(data, "..", os.path.basename(data) + "-rules.json")
    with open(rules, "w") as f:
        f.write('{"rules": {".read": "auth != null", ".write": "auth != null"}}')
    process = subprocess.Popen([BINARY, "serve", "--port", "0", "--data", data, "--rules", rules],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(re.search(r"127\.0\.0\.1:(\d+) ", process.stdout.readline()).group(1))
    assert run(port, cache, "get /", RTDB_AUTH_TOKEN="owner").returncode == 0
    stop(process)
    queued = run(port, cache, "set /signed 1", RTDB_AUTH_TOKEN="owner")
    assert queued.returncode == 0 and "1 write stays queued" in queued.stderr, queued.stderr
    process = subprocess.Popen([BINARY, "serve", "--port", str(port), "--data", data, "--rules", rules],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    process.stdout.readline()
    try:
        sent = run(port, cache, "get /signed", RTDB_AUTH_TOKEN="owner")
        assert sent.returncode == 0 and sent.stdout == "1\n", sent.stderr
        assert "rejected" not in sent.stderr, sent.stderr
        assert run(port, cache, "pending", RTDB_AUTH_TOKEN="owner").stdout == "no writes waiting for the server\n"
    finally:
        stop(process)


def test_the_credential_given_by_auth_goes_with_the_queued_writes():
    data, cache = folders()
    server, port = serve(data)
    shell = Shell(port, cache)
    shell.send("auth --uid alice", "get /")
    assert wait_until(lambda: shell.out.current() == ["null"]), shell.err.text()
    stop(server)
    shell.send("set /x 1")
    assert shell.finish() == 0, shell.err.text()
    assert "1 write stays queued" in shell.err.text()
    restarted = run(port, cache, "pending")
    assert ("rtdb: the restored writes were queued with the credential ID token for uid alice (unsigned, from auth --uid); "
            "this shell has none: the server's rules may refuse them") in restarted.stderr, restarted.stderr


def test_no_persistence_keeps_nothing_and_a_second_shell_goes_without():
    data, cache = folders()
    server, port = serve(data)
    try:
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        plain = subprocess.run([BINARY, "--no-persistence", "--url", f"ws://127.0.0.1:{port}?ns=demo", "-c", "set /a 1", "-c", "status"],
                               capture_output=True, text=True, env=env, timeout=60)
        assert plain.returncode == 0, plain.stderr
        assert "cache         off (--no-persistence)" in plain.stdout
        assert not os.path.exists(os.path.join(cache, "rtdb"))
        holder = Shell(port, cache)
        holder.send("get /a")
        assert wait_until(lambda: holder.out.current() == ["1"]), holder.out.text()
        # Parallel scripts are common: no warning off a terminal, but status says why.
        second = run(port, cache, "get /a", "status")
        assert second.returncode == 0 and second.stderr == "", second.stderr
        assert second.stdout.startswith("1\n")
        assert re.search(r"\ncache         off: another rtdb \(pid \d+\) is using this database's cache\n", second.stdout), second.stdout
        assert holder.finish() == 0
        folder = cache_folder(cache, port)
        assert oct(os.stat(folder).st_mode & 0o777) == "0o700"
    finally:
        stop(server)


def test_a_damaged_cache_is_set_aside_and_the_shell_starts_with_an_empty_one():
    data, cache = folders()
    server, port = serve(data)
    try:
        assert run(port, cache, "set /a 1").returncode == 0
        folder = cache_folder(cache, port)
        with open(os.path.join(folder, "cache.sqlite"), "r+b") as f:
            f.seek(0)
            f.write(b"this is not a database" * 100)
        damaged = run(port, cache, "get /a")
        assert damaged.returncode == 0 and damaged.stdout == "1\n", damaged.stderr
        assert "the cache could not be read (file is not a database); it starts empty, and the writes it queued, if any, will not be sent (the old file is cache.sqlite.unreadable-" in damaged.stderr, damaged.stderr
        assert any(name.startswith("cache.sqlite.unreadable-") for name in os.listdir(folder))
        clean = run(port, cache, "get /a")
        assert clean.stderr == "" and clean.stdout == "1\n"
        # A file cut to nothing is no new cache: it is said the same way.
        os.truncate(os.path.join(folder, "cache.sqlite"), 0)
        for name in os.listdir(folder):
            if name.startswith("cache.sqlite-"):
                os.remove(os.path.join(folder, name))
        emptied = run(port, cache, "get /a")
        assert "the cache could not be read (the file is empty (cut short)); it starts empty, and the writes it queued, if any, will not be sent" in emptied.stderr, emptied.stderr
    finally:
        stop(server)


def test_a_kept_write_that_cannot_be_read_is_listed_and_purged():
    data, cache = folders()
    server, port = serve(data)
    assert run(port, cache, "get /").returncode == 0
    stop(server)
    assert run(port, cache, "set /a 1").returncode == 0
    folder = cache_folder(cache, port)
    with sqlite3.connect(os.path.join(folder, "cache.sqlite")) as database:
        database.execute("INSERT INTO writes (kind, path, value) VALUES (99, '/b', x'00')")
    listed = run(port, cache, "pending")
    assert listed.returncode == 0, listed.stderr
    assert "1 queued write in the cache could not be read and was left out" in listed.stderr, listed.stderr
    assert listed.stdout == "1  set /a  1\nand 1 kept write that could not be read (never sent; purge-writes drops it)\n"
    purged = run(port, cache, "purge-writes --force", "pending")
    assert purged.returncode == 0, purged.stderr
    assert purged.stdout == "dropped 2 writes\nno writes waiting for the server\n"
    assert run(port, cache, "pending").stdout == "no writes waiting for the server\n"


def test_a_cache_of_the_first_format_is_upgraded_with_its_queue():
    data, cache = folders()
    server, port = serve(data)
    assert run(port, cache, "set /kept 1", "get /kept").returncode == 0
    stop(server)
    assert run(port, cache, "set /queued 2").returncode == 0
    # Format 1: server_data without rowids, user_version 1, no incremental vacuum.
    path = os.path.join(cache_folder(cache, port), "cache.sqlite")
    with sqlite3.connect(path) as database:
        database.executescript("""
            CREATE TABLE old (path TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
            INSERT INTO old SELECT path, value FROM server_data;
            DROP TABLE server_data;
            ALTER TABLE old RENAME TO server_data;
            PRAGMA user_version = 1;
            PRAGMA auto_vacuum = NONE;
            VACUUM;
            """)
        assert database.execute("PRAGMA auto_vacuum").fetchone() == (0,)
    upgraded = run(port, cache, "pending", "get /kept", "get /queued")
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stdout == "1  set /queued  2\n1\n2\n", upgraded.stdout
    with sqlite3.connect(path) as database:
        assert database.execute("PRAGMA user_version").fetchone() == (2,)
        assert database.execute("PRAGMA auto_vacuum").fetchone() == (2,)
        assert database.execute("SELECT sql FROM sqlite_master WHERE name = 'server_data'").fetchone()[0].endswith("NOT NULL)")


def test_the_readme_example_runs_as_printed():
    """The README's "Offline across restarts" transcript: each `$` line run by bash (port 9000
    replaced by the test server's), its standard error (lines from rtdb) and output as shown."""
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md"), encoding="utf-8").read()
    section = readme.split("### Offline across restarts", 1)[1]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    data, cache = folders()
    server, port = serve(data)
    steps, current = [], None
    for line in block.splitlines():
        if line.startswith("$ ") or line.startswith("# "):
            current = [line, [], []]
            steps.append(current)
        else:
            is_error = line.startswith("rtdb: ") or line.startswith("offline: ") or line.startswith("error: ")
            current[2 if is_error else 1].append(line.replace("9000", str(port)))
    bin_folder = os.path.dirname(BINARY)
    env = dict(os.environ, XDG_CACHE_HOME=cache, PATH=bin_folder + os.pathsep + os.environ["PATH"])
    try:
        for command, out, err in steps:
            if command == "# the server stops":
                stop(server)
            elif command == "# the server is back":
                server, _ = serve(data, port)
            else:
                result = subprocess.run(["bash", "-c", command[2:].replace("9000", str(port))], capture_output=True,
                                        text=True, env=env, timeout=60)
                assert result.returncode == 0, (command, result.stderr)
                assert result.stdout.splitlines() == out, command
                assert result.stderr.splitlines() == err, command
        assert len(steps) == 7
    finally:
        stop(server)


@pytest.fixture
def small_disk():
    """A 1 MB filesystem of its own (tmpfs), for a cache that fills it."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root (CI runs as root)")
    folder = tempfile.mkdtemp(prefix="rtdb-small-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", folder], check=True)
    yield folder
    subprocess.run(["umount", "-l", folder], check=False)


def test_a_cache_on_a_full_disk_reports_queued_only_what_it_kept(small_disk):
    data, _ = folders()
    server, port = serve(data)
    assert run(port, small_disk, "get /").returncode == 0
    stop(server)
    value = "x" * 1000
    script = "".join(f"set /big/k{i:04} {value}\n" for i in range(3000))
    env = dict(os.environ, XDG_CACHE_HOME=small_disk)
    result = subprocess.run([BINARY, "--keep-going", "--url", f"ws://127.0.0.1:{port}?ns=demo"], input=script,
                            capture_output=True, text=True, env=env, timeout=120)
    # Writes the cache could not keep fail at once, by line, with the reason; the rest are
    # counted as queued, and are exactly what the next session sends.
    assert result.returncode == 1, result.stderr
    refused = [int(m.group(1)) for m in re.finditer(r"^error: line (\d+): .*disk is full", result.stderr, re.M)]
    assert refused, result.stderr
    said = re.search(r"^offline: (\d+) writes stay queued", result.stderr, re.M)
    assert said, result.stderr
    queued = int(said.group(1))
    assert queued + len(refused) == 3000, result.stderr[-2000:]
    # Room again (as a user would make it): the next session sends exactly what was kept,
    # and once acknowledged they leave the queue for good.
    subprocess.run(["mount", "-o", "remount,size=4m", small_disk], check=True)
    server, _ = serve(data, port)
    try:
        landed = run(port, small_disk, "online")
        assert landed.returncode == 0, landed.stderr
        assert f"{queued} queued writes from an earlier session restored from the cache and sent" in landed.stderr, landed.stderr
        written = rest(port, "GET", "/big") or {}
        assert sorted(written) == [f"k{line - 1:04}" for line in range(1, 3001) if line not in refused]
        after = run(port, small_disk, "pending --json")
        assert (after.returncode, after.stdout) == (0, "[]\n"), after.stderr
    finally:
        stop(server)


def test_writes_acknowledged_while_the_cache_disk_is_full_are_never_sent_again(small_disk):
    # Online, each acknowledged set is cached: the 1 MB disk fills, and the queue cannot
    # record that later writes were acknowledged. A ledger whose room is taken at open
    # records them; the next session, with room or without, sends none of them again.
    data, _ = folders()
    server, port = serve(data)
    try:
        value = '"' + "x" * 1000 + '"'
        script = "".join(f"set /big/k{i:04} {value}\nset /cnt increment(1)\n" for i in range(1500))
        env = dict(os.environ, XDG_CACHE_HOME=small_disk)
        first = subprocess.run([BINARY, "--keep-going", "--url", f"ws://127.0.0.1:{port}?ns=demo"], input=script,
                               capture_output=True, text=True, env=env, timeout=300)
        assert first.returncode == 0, first.stderr[-2000:]
        assert rest(port, "GET", "/cnt") == 1500
        again = run(port, small_disk, "online", "get /cnt")
        assert (again.returncode, again.stdout) == (0, "1500\n"), again.stderr
        subprocess.run(["mount", "-o", "remount,size=8m", small_disk], check=True)
        roomy = run(port, small_disk, "online", "pending", "get /cnt")
        assert roomy.stdout == "no writes waiting for the server\n1500\n", roomy.stderr
        assert rest(port, "GET", "/cnt") == 1500
    finally:
        stop(server)


@pytest.mark.parametrize("where", ["rows", "pages"])
def test_damage_inside_the_cache_is_reported_and_nothing_is_sent_twice_or_out_of_order(where):
    data, cache = folders()
    server, port = serve(data)
    assert run(port, cache, "get /").returncode == 0
    stop(server)
    # Offline, 2,000 queued writes: increments, and each writing its number to /last.
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    script = "".join(f"set /cnt increment(1)\nset /last {i}\n" for i in range(1000))
    queued = subprocess.run([BINARY, "--url", f"ws://127.0.0.1:{port}?ns=demo"], input=script, capture_output=True,
                            text=True, env=env, timeout=120)
    assert "offline: 2000 writes stay queued in the cache" in queued.stderr, queued.stderr
    path = os.path.join(cache_folder(cache, port), "cache.sqlite")
    size = os.path.getsize(path)
    # Bit flips past the first pages, where the queue's rows are: in the rows' bytes, or in
    # the headers of the table's pages (their count of cells).
    with open(path, "r+b") as f:
        offsets = range(16384, size - 4096, size // 7) if where == "rows" else range(5 * 4096 + 4, size - 4096, 11 * 4096)
        for offset in offsets:
            f.seek(offset)
            byte = f.read(1)
            f.seek(offset)
            f.write(bytes([byte[0] ^ 0x10]))
    listed = run(port, cache, "pending --json")
    note = re.search(r"the cache is damaged \((.+)\): (\d+) queued writes could not be read and will not be sent; "
                     r"the (\d+) that read back whole are kept, in their order, and its cached data is dropped "
                     r"\(the old file is cache\.sqlite\.damaged-\d+\)", listed.stderr)
    assert note, listed.stderr
    lost, kept = int(note.group(2)), int(note.group(3))
    assert lost > 0 and lost + kept == 2000
    pending = json.loads(listed.stdout)
    assert len(pending) == kept
    increments = sum(1 for write in pending if write["path"] == "/cnt")
    lasts = [write["value"] for write in pending if write["path"] == "/last"]
    assert lasts == sorted(lasts)
    # Sent once, in order: then the queue is empty, and later starts send nothing.
    server, port = serve(data, port)
    try:
        assert run(port, cache, "online").returncode == 0  # sends the queue; its exit waits for the answers
        sent = run(port, cache, "pending", "get /cnt", "get /last")
        assert sent.returncode == 0, sent.stderr
        assert sent.stdout == f"no writes waiting for the server\n{increments}\n{lasts[-1] if lasts else 'null'}\n", sent.stdout
        again = run(port, cache, "online", "get /cnt")
        assert again.stdout == f"{increments}\n" and again.stderr == "", again.stderr
    finally:
        stop(server)


def test_the_folder_is_synced_before_the_first_write_is_acknowledged_and_a_read_syncs_nothing():
    # The system calls, in order, as strace sees them (scripts/test installs it).
    data = tempfile.mkdtemp(prefix="rtdb-sync-")
    trace = data + ".trace"
    folder = os.path.join(data, "demo")  # the server's folder for ns=demo
    subprocess.run([BINARY, "--data", folder, "-c", "set /seed 1"], check=True, timeout=60)
    # A one-shot read of a folder that exists syncs nothing.
    read = subprocess.run(["strace", "-f", "-qq", "-o", trace, "-e", "trace=fsync,fdatasync,sync,syncfs",
                           BINARY, "--data", folder, "-c", "get /seed"], capture_output=True, text=True, timeout=60)
    assert read.returncode == 0 and read.stdout == "1\n", read.stderr
    with open(trace) as f:
        assert f.read() == ""
    # A server opening it syncs nothing either; its first write makes the log's name durable
    # (the folder synced) before the write is answered.
    server = subprocess.Popen(["strace", "-f", "-qq", "-o", trace, "-s", "16",
                               "-e", "trace=openat,fsync,fdatasync,write,writev,sendmsg",
                               BINARY, "serve", "--port", "0", "--data", data],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        match = re.search(r"127\.0\.0\.1:(\d+) ", server.stdout.readline())
        assert match
        assert rest(int(match.group(1)), "PUT", "/a", 2) == 2
    finally:
        # The server itself is told to stop (strace would only let go of it).
        with open(f"/proc/{server.pid}/task/{server.pid}/children") as f:
            for child in f.read().split():
                os.kill(int(child), signal.SIGTERM)
        server.wait(timeout=30)
    with open(trace) as f:
        lines = f.read().splitlines()
    folder_fds, folder_synced, answered = set(), None, None
    for i, line in enumerate(lines):
        opened = re.search(r'openat\(AT_FDCWD, "%s", [^)]*O_DIRECTORY[^)]*\) = (\d+)' % re.escape(folder), line)
        if opened:
            folder_fds.add(opened.group(1))
        synced = re.search(r"fsync\((\d+)\) += 0|fsync resumed>\) += 0", line)
        if synced and folder_synced is None and (synced.group(1) in folder_fds or synced.group(1) is None):
            folder_synced = i
        if answered is None and "HTTP/1.1 200" in line:
            answered = i
    assert folder_synced is not None and answered is not None, "\n".join(lines)
    assert folder_synced < answered, "\n".join(lines)
