"""firebase-admin writing to `rtdb serve` over REST, for comparison with the WebSocket figures.
Usage: python3 Benchmarks/admin_rest.py PORT [N]"""
import sys
import time
import uuid

import firebase_admin
import os
from firebase_admin import db

port = int(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = f"127.0.0.1:{port}"
app = firebase_admin.initialize_app(options={"databaseURL": "https://bench.firebaseio.com"}, name=uuid.uuid4().hex)
ref = db.reference("/admin", app=app)
start = time.perf_counter()
for i in range(n):
    ref.child(f"k{i}").set(i)
elapsed = time.perf_counter() - start
print(f"firebase-admin: {n} sets over REST, one at a time (each acknowledged and durable): {elapsed:.2f} s ({n / elapsed:.0f}/s)")
