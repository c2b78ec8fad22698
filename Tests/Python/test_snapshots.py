"""The owner's snapshots of a namespace on `rtdb serve` (/.settings/snapshots…), with the
official firebase-admin SDK as the application whose data is saved and restored."""
import json
import os
import time

from wire import Server, admin_app, close_listener, event_collector, request, wait_until

OWNER = {"Authorization": "Bearer owner"}


def call(server, method, target, headers=OWNER):
    status, _, body = request(server.port, method, target, b"", headers)
    return status, body


def test_snapshot_endpoints_answer_exactly():
    server = Server()
    try:
        ns = "?ns=suite"
        assert call(server, "GET", "/.settings/snapshots.json" + ns) == (200, b"{}")
        assert not os.path.exists(os.path.join(server.data, "suite")), "a list makes no namespace"
        assert call(server, "POST", "/.settings/snapshots/s/restore.json" + ns) == (404, b'{"error":"there is no snapshot named s"}')
        assert call(server, "DELETE", "/.settings/snapshots/s.json" + ns) == (404, b'{"error":"there is no snapshot named s"}')
        assert not os.path.exists(os.path.join(server.data, "suite"))

        assert request(server.port, "PUT", "/users.json" + ns, b'{"ada":{"n":1}}', OWNER)[0] == 200
        status, body = call(server, "PUT", "/.settings/snapshots/s.json" + ns)
        assert status == 200, body
        saved = json.loads(body)
        assert list(saved) == ["s"] and saved["s"]["bytes"] > 0
        assert abs(saved["s"]["saved"] - time.time() * 1000) < 60_000
        assert call(server, "GET", "/.settings/snapshots.json" + ns) == (200, body)

        assert request(server.port, "PUT", "/users/bob.json" + ns, b'{"n":2}', OWNER)[0] == 200
        assert call(server, "POST", "/.settings/snapshots/s/restore.json" + ns) == (200, b"null")
        assert request(server.port, "GET", "/.json" + ns)[::2] == (200, b'{"users":{"ada":{"n":1}}}')
        # POST with the method override, as REST clients that cannot send DELETE do.
        assert call(server, "POST", "/.settings/snapshots/s.json" + ns + "&x-http-method-override=DELETE") == (200, b"null")
        assert call(server, "GET", "/.settings/snapshots.json" + ns) == (200, b"{}")
        assert call(server, "DELETE", "/.settings/snapshots/s.json" + ns) == (404, b'{"error":"there is no snapshot named s"}')

        # The owner's only; names as namespaces are named; each operation its method.
        anyone = {"Authorization": "Bearer " + "x"}
        for method, target in [("GET", "/.settings/snapshots.json"), ("PUT", "/.settings/snapshots/s.json"),
                               ("POST", "/.settings/snapshots/s/restore.json"), ("DELETE", "/.settings/snapshots/s.json")]:
            assert call(server, method, target + ns, headers={}) == \
                (401, b'{"error":"Permission denied: only the owner may keep snapshots"}'), (method, target)
        assert call(server, "GET", "/.settings/snapshots.json" + ns, headers=anyone) == \
            (401, b'{"error":"Could not parse auth token: the credential is neither \\"owner\\" nor a JSON Web Token"}')
        assert call(server, "PUT", "/.settings/snapshots/a.b.json" + ns) == \
            (400, b'{"error":"invalid snapshot name \\"a.b\\": use 1 to 64 letters, digits, \\"-\\" and \\"_\\""}')
        assert call(server, "PUT", "/.settings/snapshots/" + "x" * 65 + ".json" + ns)[0] == 400
        assert call(server, "PUT", "/.settings/snapshots.json" + ns) == (405, b'{"error":"the list of snapshots is read with GET"}')
        assert call(server, "GET", "/.settings/snapshots/s/restore.json" + ns) == (405, b'{"error":"a restore is a POST"}')
        assert call(server, "POST", "/.settings/snapshots/s.json" + ns) == \
            (405, b'{"error":"a snapshot is saved with PUT and removed with DELETE"}')
        assert call(server, "GET", "/.settings/snapshots/s" + ns)[0] == 404
        assert call(server, "GET", "/.settings/snapshots.json?ns=a.b") == (404, b'{"error":"invalid namespace \\"a.b\\""}')
    finally:
        server.stop()


def test_firebase_admin_sees_a_restore_as_one_write():
    from firebase_admin import db

    server = Server()
    try:
        with admin_app(server.port, "fixtures") as app:
            root = db.reference("/", app=app)
            root.set({"users": {"ada": {"name": "Ada"}, "bob": {"name": "Bob"}}, "count": 2})
            assert call(server, "PUT", "/.settings/snapshots/fixtures.json?ns=fixtures")[0] == 200

            events, arrived, on_event = event_collector(4)
            registration = db.reference("/users", app=app).listen(on_event)
            try:
                assert wait_until(lambda: len(events) >= 1), events
                root.update({"users/cy": {"name": "Cy"}, "count": 3})
                db.reference("/users/ada", app=app).delete()
                assert call(server, "POST", "/.settings/snapshots/fixtures/restore.json?ns=fixtures") == (200, b"null")
                assert arrived.wait(10), events
                assert events == [
                    ("put", "/", {"ada": {"name": "Ada"}, "bob": {"name": "Bob"}}),
                    ("put", "/cy", {"name": "Cy"}),
                    ("put", "/ada", None),
                    # The restore: the whole tree written at once, seen at the listened path.
                    ("put", "/", {"ada": {"name": "Ada"}, "bob": {"name": "Bob"}}),
                ]
                assert root.get() == {"users": {"ada": {"name": "Ada"}, "bob": {"name": "Bob"}}, "count": 2}
            finally:
                close_listener(registration, db.reference("/wake", app=app))
    finally:
        server.stop()
