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
    # The owner: a shell that watches, holding the folder until it is stopped.
    owner = subprocess.Popen([BINARY, "--data", folder, "watch", "/w", "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
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
