"""Starts `rtdb serve` on a free port and points firebase-admin at it, as an application would."""
import os
import re
import subprocess
import tempfile
import uuid

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The shells these tests start keep their disk caches here, not in the user's ~/.cache.
os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="rtdb-cache-"))


@pytest.fixture(scope="session")
def binary():
    return os.environ.get("RTDB_BIN", os.path.join(ROOT, ".build", "debug", "rtdb"))


@pytest.fixture(scope="session")
def server(binary):
    data = tempfile.mkdtemp(prefix="rtdb-admin-")
    process = subprocess.Popen([binary, "serve", "--port", "0", "--data", data],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    match = re.search(r"127\.0\.0\.1:(\d+) ", line)
    assert match, f"rtdb serve did not say where it listens: {line!r}"
    yield {"port": int(match.group(1)), "data": data, "process": process}
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture(scope="session")
def app(server):
    import firebase_admin
    os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = f"127.0.0.1:{server['port']}"
    app = firebase_admin.initialize_app(options={"databaseURL": "https://admin-suite.firebaseio.com"},
                                        name="rtdb-" + uuid.uuid4().hex)
    yield app
    firebase_admin.delete_app(app)


@pytest.fixture
def ref(app):
    """A fresh location per test."""
    from firebase_admin import db
    return db.reference("/tests/" + uuid.uuid4().hex[:12], app=app)
