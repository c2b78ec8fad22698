"""Processes sharing an embedded folder: the one that owns it serves the others over a Unix
socket. An owner that stops answering (SIGSTOP) is reported to a writer within its --timeout,
not waited on for ever."""
import os
import signal
import subprocess
import tempfile
import time

from wire import BINARY, wait_until


def test_a_writer_reports_an_owner_that_stopped_answering():
    folder = tempfile.mkdtemp(prefix="rtdb-shared-")
    # The owner: a shell that watches, holding the folder until it is stopped. Its events (one
    # per write the writer sent, once it runs again) go nowhere: a pipe nobody reads would
    # fill and hold it up at the end.
    owner = subprocess.Popen([BINARY, "--data", folder, "watch", "/w", "--json"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, text=True)
    try:
        assert wait_until(lambda: os.path.exists(os.path.join(folder, "socket")), timeout=30)
        writer = subprocess.Popen([BINARY, "--data", folder, "--timeout", "2s"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Connected and answered once (through the owner), then the owner stops.
        writer.stdin.write("get /w\n")
        writer.stdin.flush()
        assert writer.stdout.readline() == "null\n"
        owner.send_signal(signal.SIGSTOP)
        started = time.monotonic()
        try:
            writer.stdin.write("".join(f"set /w/k{i} {i}\n" for i in range(20_000)))
            writer.stdin.close()
        except BrokenPipeError:
            pass  # it stopped reading: what it says is below
        status = writer.wait(timeout=60)
        took = time.monotonic() - started
        error = writer.stderr.read()
        # 10,000 unanswered writes fill the window; the next line waits 2 s for room, then fails,
        # and the script ends saying what was not acknowledged (exit status 4).
        assert status == 4, error
        assert error == ("error: line 10002: the server answered none of the 10000 writes sent to it in 2 s: it does not answer (stopped or overloaded)\n"
                         "error: 10000 writes were not acknowledged by the server after 2 seconds in which it acknowledged none and may be lost\n"), error
        assert took < 30, took
    finally:
        owner.send_signal(signal.SIGCONT)
        owner.terminate()
        owner.wait(timeout=30)


def _count(folder):
    done = subprocess.run([BINARY, "--data", folder, "get", "/cnt"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return 0 if done.stdout == "null\n" else int(done.stdout)


def _writers(folder, count, lines):
    """`count` scripts, each of `lines` increments of /cnt, started at once on `folder`."""
    script = "set /cnt increment(1)\n" * lines
    writers = [subprocess.Popen([BINARY, "--data", folder], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(count)]
    for writer in writers:
        writer.stdin.write(script)
        writer.stdin.flush()
    return writers


def _finish(writers):
    for writer in writers:
        writer.stdin.close()
    for writer in writers:
        assert writer.wait(timeout=300) == 0
        # Not even SwiftNIO's complaint of work sent to a loop that had shut down.
        assert writer.stderr.read() == ""


def test_scripts_started_together_apply_each_write_once():
    # Each exits when its script ends; those still writing reach the next owner.
    folder = tempfile.mkdtemp(prefix="rtdb-shared-")
    _finish(_writers(folder, 6, 1500))
    assert _count(folder) == 9000


def _owner_leaves(how):
    folder = tempfile.mkdtemp(prefix="rtdb-shared-")
    owner = subprocess.Popen([BINARY, "--data", folder], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    owner.stdin.write("set /owner 1\n")
    owner.stdin.flush()
    assert wait_until(lambda: os.path.exists(os.path.join(folder, "socket")), timeout=30)
    writers = _writers(folder, 4, 3000)
    # Once the owner has applied some of their writes, it leaves, acknowledged or not.
    assert wait_until(lambda: _count(folder) >= 200, timeout=60)
    if how == "exit":
        owner.stdin.close()
        assert owner.wait(timeout=60) == 0
        assert owner.stderr.read() == ""
    else:
        owner.kill()
        owner.wait(timeout=60)
    _finish(writers)
    assert _count(folder) == 12000, how


def test_a_clean_exit_of_the_owner_applies_each_write_once():
    _owner_leaves("exit")


def test_a_killed_owner_applies_each_write_once():
    # What it logged is in the log with the writer's name; sent again, it is answered.
    _owner_leaves("kill")


def _second_process_error(folder):
    owner = subprocess.Popen([BINARY, "--data", folder, "watch", "/w", "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: os.path.exists(os.path.join(folder, "LOCK")), timeout=30)
        time.sleep(0.5)  # past the moment it starts serving
        second = subprocess.run([BINARY, "--data", folder, "--timeout", "1s", "get", "/w"], capture_output=True,
                                text=True, timeout=60)
        assert second.returncode != 0
        return second.stderr, owner.pid
    finally:
        owner.terminate()
        owner.wait(timeout=30)


def test_an_owner_that_cannot_serve_a_socket_path_that_long_is_reported_as_such():
    folder = tempfile.mkdtemp(prefix="rtdb-shared-")
    folder = os.path.join(folder, "x" * (108 - len(folder)))
    error, pid = _second_process_error(folder)
    assert error == (f"rtdb: the data folder {folder} is in use by another rtdb process (pid {pid}), which cannot share it: "
                     f"the path of {folder}/socket is too long for a Unix socket (107 bytes at most); stop it or choose "
                     f"another folder with --data\n"), error


def test_an_owner_that_cannot_serve_because_the_socket_is_a_folder_is_reported_as_such():
    folder = tempfile.mkdtemp(prefix="rtdb-shared-")
    os.mkdir(os.path.join(folder, "socket"))
    error, pid = _second_process_error(folder)
    assert error == (f"rtdb: the data folder {folder} is in use by another rtdb process (pid {pid}), which cannot share it: "
                     f"{folder}/socket is not a socket (remove it); stop it or choose another folder with --data\n"), error
