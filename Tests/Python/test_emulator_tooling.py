"""`rtdb serve` answers the Firebase emulator's tooling byte for byte: the requests below are
the ones firebase-tools (emulators:export, emulators:start --import), the Emulator UI's JSON
import and @firebase/rules-unit-testing send to the database emulator, with their headers."""
import http.client
import json
import os
import signal
import tempfile
import uuid

import wire

CLI = {"Connection": "keep-alive", "User-Agent": "FirebaseCLI/14.0.0", "X-Client-Version": "FirebaseCLI/14.0.0",
       "Authorization": "Bearer owner"}


def send(port, method, target, body=b"", headers=None, chunked=False):
    """One request through Python's HTTP client (chunked bodies as Node streams them)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        if chunked:
            connection.putrequest(method, target)
            for name, value in (headers or {}).items():
                connection.putheader(name, value)
            connection.putheader("Transfer-Encoding", "chunked")
            connection.endheaders()
            for start in range(0, len(body), 7):
                piece = body[start:start + 7]
                connection.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            connection.send(b"0\r\n\r\n")
        else:
            connection.request(method, target, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def put_as_owner(port, namespace, path, value):
    status, _ = send(port, "PUT", f"/{path}.json?ns={namespace}", json.dumps(value).encode(), {"Authorization": "Bearer owner"})
    assert status == 200


def test_export_requests_of_firebase_tools():
    server = wire.Server()
    try:
        put_as_owner(server.port, "namespace-a", "", {"ns": "namespace-a", "n": {".value": 1, ".priority": 5}})
        put_as_owner(server.port, "namespace-b", "", {"ns": "namespace-b"})
        # Only read: it is neither made nor listed.
        assert send(server.port, "GET", "/.json?ns=namespace-c", headers=CLI) == (200, b"null")

        assert send(server.port, "GET", "/.inspect/databases.json?ns=demo-project", headers=CLI) == \
            (200, b'[{"name":"namespace-a"},{"name":"namespace-b"}]')
        # The probe: a namespace whose answer is null is not exported.
        assert send(server.port, "GET", "/.json?ns=namespace-a&shallow=true&limitToFirst=1", headers=CLI) == (200, b'{"n":true}')
        assert send(server.port, "GET", "/.json?ns=namespace-c&shallow=true&limitToFirst=1", headers=CLI) == (200, b"null")
        # The download, in the export format (priorities kept).
        assert send(server.port, "GET", "/.json?ns=namespace-a&format=export", headers={"Authorization": "Bearer owner"}) == \
            (200, b'{"n":{".value":1,".priority":5},"ns":"namespace-a"}')
    finally:
        server.stop()


def test_import_request_of_firebase_tools_streams_a_chunked_file():
    server = wire.Server()
    try:
        body = json.dumps({"users": {"ada": {".priority": 1, "name": "Ada"}}, "list": [1, 2, 3]}).encode()
        headers = {"Authorization": "Bearer owner", "Content-Type": "application/json"}
        status, _ = send(server.port, "PUT", "/.json?ns=seeded&disableTriggers=true&writeSizeLimit=unlimited", body, headers, chunked=True)
        assert status == 200
        assert send(server.port, "GET", "/.json?ns=seeded&format=export", headers={"Authorization": "Bearer owner"}) == \
            (200, b'{"list":{"0":1,"1":2,"2":3},"users":{"ada":{".priority":1,"name":"Ada"}}}')
    finally:
        server.stop()


def test_write_parameters_are_checked():
    server = wire.Server()
    try:
        for limit in ["tiny", "small", "medium", "large", "unlimited"]:
            assert send(server.port, "PUT", f"/x.json?ns=limits&writeSizeLimit={limit}&disableTriggers=false", b"1")[0] == 200
        assert send(server.port, "PATCH", "/x.json?ns=limits&writeSizeLimit=huge", b"{}") == \
            (400, b'{"error":"writeSizeLimit must be tiny, small, medium, large or unlimited, not \\"huge\\""}')
        assert send(server.port, "DELETE", "/x.json?ns=limits&disableTriggers=yes") == \
            (400, b'{"error":"disableTriggers must be true or false, not \\"yes\\""}')
    finally:
        server.stop()


def multipart(boundary, fields):
    """A form as a browser's FormData sends it: (name, filename, content type, bytes) per field."""
    body = b""
    for name, filename, content_type, content in fields:
        body += f"--{boundary}\r\n".encode()
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        body += f"Content-Disposition: {disposition}\r\n".encode()
        if content_type:
            body += f"Content-Type: {content_type}\r\n".encode()
        body += b"\r\n" + content + b"\r\n"
    return body + f"--{boundary}--\r\n".encode()


def test_emulator_ui_import_and_namespace_list():
    server = wire.Server()
    try:
        boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
        content = json.dumps({"ada": {"age": 36, ".priority": "p"}, "bob": {"age": 41}}).encode()
        form = multipart(boundary, [("myFile", "users.json", "application/json", content)])
        target = "/users/.upload?ns=ui-demo&access_token=owner&writeSizeLimit=unlimited&disableTriggers=true"
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Origin": f"http://127.0.0.1:{server.port}"}
        assert send(server.port, "POST", target, form, headers) == (204, b"")
        assert send(server.port, "GET", "/users.json?ns=ui-demo&format=export", headers={"Authorization": "Bearer owner"}) == \
            (200, b'{"ada":{".priority":"p","age":36},"bob":{"age":41}}')
        # At the root, with another field before the file.
        form = multipart(boundary, [("note", None, None, b"seed"), ("myFile", "all.json", "application/json", b'{"a":1}')])
        assert send(server.port, "POST", "/.upload?ns=ui-root&access_token=owner&writeSizeLimit=unlimited", form,
                    {"Content-Type": f'multipart/form-data; boundary="{boundary}"'}) == (204, b"")
        assert send(server.port, "GET", "/.json?ns=ui-root") == (200, b'{"a":1}')
        # The UI polls the list without a credential.
        assert send(server.port, "GET", "/.inspect/databases.json?ns=ui-demo") == \
            (200, b'[{"name":"ui-demo"},{"name":"ui-root"}]')

        # Refusals say what is wrong; nothing is written.
        form = multipart(boundary, [("other", "x.json", "application/json", b"1")])
        assert send(server.port, "POST", target, form, {"Content-Type": f"multipart/form-data; boundary={boundary}"}) == \
            (400, b'{"error":"Invalid upload: the form has no field named \\"myFile\\""}')
        form = multipart(boundary, [("myFile", "x.json", "application/json", b'{"a": tru}')])
        status, body = send(server.port, "POST", target, form, {"Content-Type": f"multipart/form-data; boundary={boundary}"})
        assert status == 400 and json.loads(body)["error"].startswith("Invalid data; couldn't parse JSON object, array, or value:")
        assert send(server.port, "POST", target, b'{"a":1}', {"Content-Type": "application/json"}) == \
            (400, b'{"error":"Invalid upload: an upload is a multipart/form-data body (Content-Type: multipart/form-data; boundary=\xe2\x80\xa6)"}')
        cut = multipart(boundary, [("myFile", "x.json", "application/json", b"1")])[:-30]
        status, body = send(server.port, "POST", target, cut, {"Content-Type": f"multipart/form-data; boundary={boundary}"})
        assert status == 400 and b"cut short" in body
        assert send(server.port, "GET", "/users.json?ns=ui-demo&shallow=true") == (200, b'{"ada":true,"bob":true}')
        # An upload writes data, never settings.
        form = multipart(boundary, [("myFile", "rules.json", "application/json", b'{"rules": {".read": true}}')])
        assert send(server.port, "POST", "/.settings/rules/.upload?ns=ui-demo&access_token=owner", form,
                    {"Content-Type": f"multipart/form-data; boundary={boundary}"}) == \
            (400, b'{"error":"an upload writes data: its path cannot start with a key beginning with \'.\'"}')
        # Only the owner may replace data this way when rules say so.
        rules = b'{"rules": {".read": true, ".write": false}}'
        assert send(server.port, "PUT", "/.settings/rules.json?ns=ui-demo", rules, {"Authorization": "Bearer owner"})[0] == 200
        form = multipart(boundary, [("myFile", "x.json", "application/json", b"1")])
        assert send(server.port, "POST", "/users/.upload?ns=ui-demo", form, {"Content-Type": f"multipart/form-data; boundary={boundary}"})[0] == 401
    finally:
        server.stop()


def test_rules_unit_testing_loads_rules_and_clears_the_database():
    server = wire.Server()
    try:
        project = "demo-" + uuid.uuid4().hex[:8]
        put_as_owner(server.port, project, "rooms/r1", {"name": "one"})
        # loadDatabaseRules: the raw rules text, no Content-Type.
        rules = b'{"rules": {".read": "auth != null", ".write": "auth != null"}}'
        assert send(server.port, "PUT", f"/.settings/rules.json?ns={project}", rules, {"Authorization": "Bearer owner"}) == \
            (200, b'{"status":"ok"}')
        assert send(server.port, "PUT", f"/.settings/rules.json?ns={project}", b'{"rules": {".read": tru}}',
                    {"Authorization": "Bearer owner"}) == \
            (400, b'{"error":"1:21: Parse error. unexpected text; expected true; the rules were not changed"}')
        assert send(server.port, "GET", f"/.json?ns={project}")[0] == 401

        # clearDatabase: the SDK signs in with the owner token (not a JWT, so `gauth`) and
        # sets the root to null over the realtime protocol.
        socket = wire.WebSocket(server.port, namespace=project)
        socket.hello()
        socket.send({"t": "d", "d": {"r": 1, "a": "gauth", "b": {"cred": "owner"}}})
        assert socket.response(1) == {"s": "ok", "d": ""}
        socket.send({"t": "d", "d": {"r": 2, "a": "p", "b": {"p": "/", "d": None}}})
        assert socket.response(2) == {"s": "ok", "d": ""}
        socket.close()
        assert send(server.port, "GET", f"/.json?ns={project}", headers={"Authorization": "Bearer owner"}) == (200, b"null")
    finally:
        server.stop()


def write_export(folder, namespaces):
    os.makedirs(os.path.join(folder, "database_export"))
    metadata = {"version": "14.0.0", "firestore": {"version": "1.19.0", "path": "firestore_export"},
                "database": {"version": "4.11.2", "path": "database_export"}}
    with open(os.path.join(folder, "firebase-export-metadata.json"), "w") as f:
        json.dump(metadata, f, indent=2)
    for name, value in namespaces.items():
        with open(os.path.join(folder, "database_export", name + ".json"), "w") as f:
            json.dump(value, f)


def test_import_then_firebase_admin_reads_it_whole_and_export_on_exit_writes_it_back():
    from firebase_admin import db

    seed = tempfile.mkdtemp(prefix="rtdb-seed-")
    users = {"ada": {".priority": 2, "name": "Ada", "langs": {"0": "en", "1": "fr"}},
             "bob": {".priority": 1, "name": "Bob"}}
    write_export(seed, {"my-project": {"users": users, "count": 2}, "other": {"x": True}})
    out = tempfile.mkdtemp(prefix="rtdb-export-")
    server = wire.Server("--import", seed, "--export-on-exit", out)
    try:
        with wire.admin_app(server.port, "my-project") as app:
            assert db.reference("/", app=app).get() == {"count": 2, "users": {"ada": {"name": "Ada", "langs": ["en", "fr"]},
                                                                              "bob": {"name": "Bob"}}}
            db.reference("/count", app=app).set(3)
            db.reference("/", app=app).child("added").set({"by": "admin"})
            put_as_owner(server.port, "other", "", None)  # imported, then emptied: exported as null
            put_as_owner(server.port, "fresh", "a", 1)
    finally:
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=60)
    assert server.process.returncode == 0
    log = server.log()
    assert "imported 2 namespaces from " + seed + ": my-project, other" in log
    assert "exported 3 namespaces to " + out in log
    assert sorted(os.listdir(os.path.join(out, "database_export"))) == ["fresh.json", "my-project.json", "other.json"]
    with open(os.path.join(out, "database_export", "my-project.json"), "rb") as f:
        assert f.read() == b'{"added":{"by":"admin"},"count":3,"users":{"ada":{".priority":2,"langs":{"0":"en","1":"fr"},"name":"Ada"},' \
                           b'"bob":{".priority":1,"name":"Bob"}}}'
    with open(os.path.join(out, "database_export", "other.json"), "rb") as f:
        assert f.read() == b"null"
    with open(os.path.join(out, "firebase-export-metadata.json")) as f:
        metadata = json.load(f)
    assert metadata["database"] == {"version": metadata["version"], "path": "database_export"}

    # What was exported imports again, into a fresh folder, whole.
    again = wire.Server("--import", out)
    try:
        assert send(again.port, "GET", "/users.json?ns=my-project&format=export", headers={"Authorization": "Bearer owner"}) == \
            (200, b'{"ada":{".priority":2,"langs":{"0":"en","1":"fr"},"name":"Ada"},"bob":{".priority":1,"name":"Bob"}}')
    finally:
        again.stop()


def test_export_keeps_the_other_emulators_entries():
    out = tempfile.mkdtemp(prefix="rtdb-export-")
    # An earlier export's namespace that this one does not hold would come back on import.
    write_export(out, {"gone": {"a": 1}})
    server = wire.Server("--export-on-exit", out)
    put_as_owner(server.port, "kept", "a", 1)
    server.stop()
    with open(os.path.join(out, "firebase-export-metadata.json")) as f:
        metadata = json.load(f)
    assert metadata["firestore"] == {"version": "1.19.0", "path": "firestore_export"}
    assert metadata["database"]["path"] == "database_export"
    assert os.listdir(os.path.join(out, "database_export")) == ["kept.json"]


def test_an_export_of_other_emulators_only_imports_nothing():
    seed = tempfile.mkdtemp(prefix="rtdb-seed-")
    with open(os.path.join(seed, "firebase-export-metadata.json"), "w") as f:
        json.dump({"version": "14.0.0", "firestore": {"version": "1.19.0", "path": "firestore_export"}}, f)
    server = wire.Server("--import", seed)
    try:
        assert send(server.port, "GET", "/.inspect/databases.json") == (200, b"[]")
    finally:
        server.stop()
    assert f"imported 0 namespaces from {seed}\n" in server.log()


def test_a_bad_import_stops_the_server_and_loads_nothing():
    seed = tempfile.mkdtemp(prefix="rtdb-seed-")
    write_export(seed, {"good": {"a": 1}})
    with open(os.path.join(seed, "database_export", "zbad.json"), "w") as f:
        f.write('{"a":\n  {"b": tru}}')
    data = tempfile.mkdtemp(prefix="rtdb-data-")
    result = __import__("subprocess").run([wire.BINARY, "serve", "--port", "0", "--data", data, "--import", seed],
                                          capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr == f"rtdb serve: --import: {seed}/database_export/zbad.json:2:9: expected a value, found 't'\n"
    assert os.listdir(data) == []


def test_coverage_report_as_the_quickstarts_fetch_it():
    """The emulator quickstarts load their rules (as rules-unit-testing does), run their
    tests, then download `/.inspect/coverage?ns=NS` (a page) with no credential;
    `/.inspect/coverage.json` is the same as data. REST requests count, even of a namespace
    with no data yet."""
    server = wire.Server()
    try:
        rules = b'{"rules": {"rooms": {"$room": {".read": "auth != null", ".write": "auth.uid === \'ada\'"}}}}'
        assert send(server.port, "PUT", "/.settings/rules.json?ns=quickstart", rules, {"Authorization": "Bearer owner"})[0] == 200
        assert send(server.port, "GET", "/rooms/r1.json?ns=quickstart")[0] == 401
        assert send(server.port, "PUT", "/rooms/r1.json?ns=quickstart", b'"x"', {"Authorization": "Bearer owner"})[0] == 200
        # A rules check asks without making a request: not counted.
        question = b'{"operation": "read", "path": "/rooms/r1", "credential": null}'
        assert send(server.port, "POST", "/.settings/rules/check.json?ns=quickstart", question, {"Authorization": "Bearer owner"})[0] == 200
        status, body = send(server.port, "GET", "/.inspect/coverage.json?ns=quickstart", headers={"Connection": "keep-alive"})
        assert status == 200
        report = json.loads(body)
        assert [(rule["rule"], rule["evaluations"]) for rule in report["rules"]] == [("/rooms/$room/.read", 1), ("/rooms/$room/.write", 0)]
        assert report["rules"][0]["parts"][0]["values"] == {"false": 1}

        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("GET", "/.inspect/coverage?ns=quickstart")
        answer = connection.getresponse()
        page = answer.read().decode()
        connection.close()
        assert answer.status == 200
        assert answer.getheader("Content-Type") == "text/html; charset=utf-8"
        assert '<span class="p false" title="auth != null: false ×1">' in page
        assert '<span class="p never" title="auth.uid === \'ada\': never evaluated">' in page
        assert "http://" not in page and "https://" not in page
        assert send(server.port, "POST", "/.inspect/coverage.json?ns=quickstart")[0] == 405
    finally:
        server.stop()
