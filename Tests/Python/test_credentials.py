"""`rtdb --credentials KEY`: a service account key turned into OAuth2 access tokens, against a
token endpoint started here (nothing leaves the machine) that checks the signed assertion as
Google's does, then used with `rtdb serve`."""
import base64
import http.server
import json
import os
import re
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from wire import BINARY, Server, wait_until


def b64decode(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


class TokenEndpoint:
    """POST /token with a JWT-bearer assertion: verified with the account's public key; answers
    the emulator's owner token, valid for `lifetime` seconds."""

    def __init__(self, public_key, email, lifetime):
        self.requests = []
        self.failures = []
        self.delay = 0  # seconds before each answer
        endpoint = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                time.sleep(endpoint.delay)
                form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
                try:
                    assert form["grant_type"] == ["urn:ietf:params:oauth:grant-type:jwt-bearer"], form
                    head, body, signature = form["assertion"][0].split(".")
                    public_key.verify(b64decode(signature), f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
                    header, claims = json.loads(b64decode(head)), json.loads(b64decode(body))
                    assert header == {"alg": "RS256", "typ": "JWT"}, header
                    assert claims["iss"] == email and claims["aud"] == endpoint.url, claims
                    assert claims["scope"] == "https://www.googleapis.com/auth/firebase.database https://www.googleapis.com/auth/userinfo.email"
                    assert claims["exp"] - claims["iat"] == 3600 and abs(claims["iat"] - time.time()) < 60, claims
                    endpoint.requests.append(claims)
                    answer, status = {"access_token": "owner", "expires_in": lifetime, "token_type": "Bearer"}, 200
                except Exception as error:  # the test fails on it below
                    endpoint.failures.append(repr(error))
                    answer, status = {"error": "invalid_grant", "error_description": "bad assertion"}, 400
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/token"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def account(tmp_path):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    email = "rtdb-test@demo-project.iam.gserviceaccount.com"

    def make(lifetime=3600):
        endpoint = TokenEndpoint(key.public_key(), email, lifetime)
        path = tmp_path / "key.json"
        path.write_text(json.dumps({"type": "service_account", "project_id": "demo-project", "private_key_id": "k1",
                                    "private_key": pem, "client_email": email, "token_uri": endpoint.url}))
        return endpoint, str(path), email
    return make


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    rules = tmp_path_factory.mktemp("rules") / "rules.json"
    rules.write_text('{"rules": {"secret": {".read": false, ".write": false}}}')
    s = Server("--rules", str(rules))
    yield s
    s.stop()


def shell(server, *arguments, env=None):
    return subprocess.run([BINARY, "--url", f"ws://127.0.0.1:{server.port}?ns=keys", *arguments],
                          capture_output=True, text=True, timeout=60, env=env)


def test_a_service_account_signs_in_as_the_server_expects(server, account):
    endpoint, key, email = account()
    try:
        result = shell(server, "--credentials", key, "-c", "set /secret/x 1", "-c", "get /secret", "-c", "status --json", "-c", "rules get")
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines[0] == '{"x":1}'
        status = json.loads(lines[1])
        assert status["credential"] == f"OAuth2 access token for {email} (service account key {key}, renewed before it expires)"
        assert json.loads("\n".join(lines[2:])) == {"rules": {"secret": {".read": False, ".write": False}}}
        assert endpoint.failures == [] and len(endpoint.requests) == 1
        # Neither the key nor the token is printed or logged.
        assert "PRIVATE KEY" not in result.stdout + result.stderr + server.log()
    finally:
        endpoint.stop()


def test_the_token_is_renewed_before_it_expires(server, account):
    endpoint, key, _ = account(lifetime=2)
    try:
        result = shell(server, "--credentials", key, "-c", "sleep 2.5", "-c", "get /secret")
        assert result.returncode == 0, result.stderr
        assert endpoint.failures == [] and len(endpoint.requests) >= 3, endpoint.requests
    finally:
        endpoint.stop()


def test_bad_keys_and_refusals_are_clear(server, account, tmp_path):
    endpoint, key, email = account()
    endpoint.stop()
    refused = shell(server, "--credentials", key, "-c", "get /")
    assert refused.returncode == 3
    assert refused.stderr.startswith(f"rtdb: the service account key {key} gave no access token: cannot reach 127.0.0.1:"), refused.stderr
    not_a_key = tmp_path / "other.json"
    not_a_key.write_text('{"type": "authorized_user"}')
    result = shell(server, "--credentials", str(not_a_key), "-c", "get /")
    assert (result.returncode, result.stderr) == (3, f'rtdb: {not_a_key} is not a service account key (its "type" is not "service_account")\n')
    missing = shell(server, "--credentials", str(tmp_path / "missing.json"), "-c", "get /")
    assert missing.stderr == f"rtdb: cannot read the service account key {tmp_path / 'missing.json'}\n"


def serve_signed_in_only(data, rules, port=0):
    process = subprocess.Popen([BINARY, "serve", "--port", str(port), "--data", data, "--rules", str(rules)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return process, int(re.search(r"127\.0\.0\.1:(\d+) ", process.stdout.readline()).group(1))


def test_a_shell_started_offline_fetches_its_token_and_sends_the_restored_writes_signed_in(account, tmp_path):
    endpoint, key, _ = account()
    rules = tmp_path / "rules.json"
    rules.write_text('{"rules": {".read": "auth != null", ".write": "auth != null"}}')
    data, cache = str(tmp_path / "data"), str(tmp_path / "cache")
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    process, port = serve_signed_in_only(data, rules)
    url = f"ws://127.0.0.1:{port}?ns=keys"
    try:
        assert subprocess.run([BINARY, "--url", url, "--credentials", key, "-c", "get /"], env=env, timeout=60).returncode == 0
        process.terminate()
        process.wait(timeout=30)
        queued = subprocess.run([BINARY, "--url", url, "--credentials", key, "-c", "set /signed 1"],
                                capture_output=True, text=True, env=env, timeout=60)
        assert queued.returncode == 0 and "1 write stays queued" in queued.stderr, queued.stderr
        # Started offline: the token comes from the endpoint (late: the server is back before
        # it); the connection waits for it, so the restored write reaches the server signed in.
        endpoint.delay = 5
        shell = subprocess.Popen([BINARY, "--url", url, "--credentials", key], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env)
        time.sleep(1)
        process, _ = serve_signed_in_only(data, rules, port)

        def landed():
            owner = urllib.request.Request(f"http://127.0.0.1:{port}/signed.json?ns=keys", headers={"Authorization": "Bearer owner"})
            with urllib.request.urlopen(owner, timeout=10) as answer:
                return json.loads(answer.read()) == 1
        assert wait_until(landed, timeout=30), "the restored write did not land"
        # The server shows a write once applied, its acknowledgement follows the commit: the
        # shell is asked only after its end of input, which waits for that acknowledgement.
        out, err = shell.communicate("", timeout=60)
        assert shell.returncode == 0, err
        assert "offline: cannot reach" in err and "1 queued write restored" in err, err
        assert "rejected" not in err and endpoint.failures == [], err
        after = subprocess.run([BINARY, "--url", url, "--credentials", key, "-c", "pending"],
                               capture_output=True, text=True, env=env, timeout=60)
        assert after.returncode == 0, after.stderr
        assert after.stdout == "no writes waiting for the server\n", (after.stdout, after.stderr)
        assert "restored" not in after.stderr, after.stderr
    finally:
        process.terminate()
        process.wait(timeout=30)
        endpoint.stop()
