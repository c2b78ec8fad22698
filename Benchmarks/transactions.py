"""Transactions committed per second on one hot counter, with 1, 4 and 8 contending clients:
`rtdb tx` processes (each a script of N lines, as users run them) against the same workload
through firebase-admin's ETag transactions (threads, one REST client each), on one
`rtdb serve`, in the same run.
Usage: python3 Benchmarks/transactions.py RTDB_BINARY PORT [N]"""
import os
import subprocess
import sys
import threading
import time
import uuid

import firebase_admin
from firebase_admin import db

binary, port = sys.argv[1], int(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = f"127.0.0.1:{port}"
url = f"ws://127.0.0.1:{port}?ns=txbench"


def rtdb_run(clients, path):
    script = "".join(f"tx {path} '$ + 1'\n" for _ in range(n))
    start = time.perf_counter()
    shells = [subprocess.Popen([binary, "--url", url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for _ in range(clients)]
    results = [shell.communicate(script) for shell in shells]
    elapsed = time.perf_counter() - start
    failed = sum(1 for shell in shells if shell.returncode != 0)
    committed = sum(len(out.split()) for out, _ in results)
    return committed, elapsed, failed


def admin_run(clients, path):
    apps = [firebase_admin.initialize_app(options={"databaseURL": "https://txbench.firebaseio.com"},
                                          name=uuid.uuid4().hex) for _ in range(clients)]
    refs = [db.reference(path, app=app) for app in apps]
    committed, failed, lock = [0], [0], threading.Lock()

    def work(ref):
        for _ in range(n):
            try:
                ref.transaction(lambda current: (current or 0) + 1)
                with lock:
                    committed[0] += 1
            except db.TransactionAbortedError:
                with lock:
                    failed[0] += 1

    threads = [threading.Thread(target=work, args=(ref,)) for ref in refs]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    for app in apps:
        firebase_admin.delete_app(app)
    return committed[0], elapsed, failed[0]


check = db.reference("/", app=firebase_admin.initialize_app(
    options={"databaseURL": "https://txbench.firebaseio.com"}, name="check"))
for clients in (1, 4, 8):
    ours, ours_time, ours_failed = rtdb_run(clients, f"/hot/rtdb{clients}")
    theirs, theirs_time, theirs_failed = admin_run(clients, f"/hot/admin{clients}")
    final = check.child(f"hot/rtdb{clients}").get()
    print(f"transactions: {clients} client{'s' if clients > 1 else ''} x {n} on one counter: "
          f"rtdb tx {ours / ours_time:.0f}/s ({ours} committed, {ours_failed} processes failed, counter {final}); "
          f"firebase-admin ETag {theirs / theirs_time:.0f}/s ({theirs} committed, {theirs_failed} gave up after 25 tries); "
          f"ratio {(ours / ours_time) / (theirs / theirs_time):.2f}")
