"""Security rules on `rtdb serve`, over REST and over the realtime protocol: the table of
Tests/RTDBRulesTests/RuleCases.json (also run against the rules engine alone), then the
behaviours around it: a rules change cancels listens, expired and invalid tokens, the
owner-only settings endpoint, errors with line and column."""
import base64
import json
import os
import socket
import time
import urllib.parse

import pytest

from wire import ROOT, Server, WebSocket, request

TABLE = json.load(open(os.path.join(ROOT, "Tests", "RTDBRulesTests", "RuleCases.json")))
OWNER = {"Authorization": "Bearer owner"}


def part(value):
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def token(claims, expires_in=3600, alg="none"):
    """An ID token: unsigned (as the emulator and mockUserToken make them), or with `alg`
    and a signature, which a local server does not check but whose expiry it holds."""
    now = int(time.time())
    payload = {"iat": now, "exp": now + expires_in, **{k: v for k, v in claims.items() if k != "uid"}}
    if "uid" in claims:
        payload["sub"] = payload["user_id"] = claims["uid"]
    signature = "" if alg == "none" else part("not checked")
    return part({"alg": alg, "typ": "JWT"}) + "." + part(payload) + "." + signature


def mock_user_token(uid):
    """The token of the JS SDK's `connectDatabaseEmulator(..., {mockUserToken: {user_id, sub}})`
    (and @firebase/rules-unit-testing's authenticatedContext): unsigned, issued at 0, expired
    in 1970."""
    payload = {"iss": "https://securetoken.google.com/demo-project", "aud": "demo-project", "iat": 0, "exp": 3600,
               "auth_time": 0, "sub": uid, "user_id": uid, "firebase": {"sign_in_provider": "custom", "identities": {}}}
    return part({"alg": "none", "type": "JWT"}) + "." + part(payload) + "."


def credential(auth):
    if auth is None:
        return None
    return "owner" if auth == "owner" else token(auth)


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.stop()


def rest(server, method, path, namespace, body=None, auth=None, query=None, headers=None):
    items = {"ns": namespace, **(query or {})}
    if auth is not None:
        items["auth"] = credential(auth)
    target = ("/" + path.strip("/") if path != "/" else "") + ".json?" + urllib.parse.urlencode(items)
    data = b"" if body is None else json.dumps(body).encode()
    status, _, answer = request(server.port, method, target if target.startswith("/") else "/" + target, data, headers)
    return status, answer


def stream_until(server, path, namespace, credential, marker):
    """Opens a REST stream (SSE) at `path` with `credential`; what it sent up to `marker`."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(f"GET {path}.json?ns={namespace}&auth={credential} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  "Accept: text/event-stream\r\n\r\n".encode())
        seen = b""
        while marker not in seen:
            chunk = s.recv(4096)
            assert chunk, seen
            seen += chunk
        return seen


def load(server, namespace, group):
    status, answer = rest(server, "PUT", "/.settings/rules", namespace, group["rules"], auth="owner")
    assert status == 200, answer


def reset(server, namespace, group):
    status, answer = rest(server, "PUT", "/", namespace, group["data"], auth="owner")
    assert status == 200, answer


def check_after(server, namespace, case, label):
    if "after" not in case:
        return
    status, answer = rest(server, "GET", case["after"]["path"], namespace, auth="owner")
    assert status == 200 and json.loads(answer) == case["after"]["value"], f"{label}: {answer!r}"


def wire_query(parameters):
    """REST's query parameters as the realtime protocol's query object."""
    if not parameters:
        return None
    q = {}
    order = json.loads(parameters.get("orderBy", "null"))
    if order not in (None, "$priority"):
        q["i"] = {"$key": ".key", "$value": ".value"}.get(order, order)
    for name, side in (("startAt", "sp"), ("endAt", "ep"), ("equalTo", None)):
        if name in parameters:
            value = json.loads(parameters[name])
            if side:
                q[side] = value
            else:
                q["sp"] = q["ep"] = value
    for name, side in (("limitToFirst", "l"), ("limitToLast", "r")):
        if name in parameters:
            q["l"] = int(parameters[name])
            q["vf"] = side
    return q


CASES = [(g, i, c) for g in TABLE["groups"] for i, c in enumerate(g["cases"])]


def test_the_table_has_enough_cases():
    assert len(CASES) >= 80


def test_every_case_over_rest(server):
    namespace = "rules-rest"
    for group in TABLE["groups"]:
        load(server, namespace, group)
        for i, case in enumerate(group["cases"]):
            label = f"{group['name']}, case {i + 1}"
            reset(server, namespace, group)
            op, path, auth = case["op"], case["path"], case["auth"]
            if op == "read":
                status, answer = rest(server, "GET", path, namespace, auth=auth, query=case.get("query"))
            elif op == "set":
                method = "DELETE" if case["value"] is None else "PUT"
                status, answer = rest(server, method, path, namespace, case["value"], auth=auth)
            else:
                status, answer = rest(server, "PATCH", path, namespace, case["value"], auth=auth)
            expected = 200 if case["allow"] else 401
            assert status == expected, f"{label}: {status} {answer!r}"
            if not case["allow"]:
                assert b"Permission denied" in answer, label
            check_after(server, namespace, case, label)


def connect(server, namespace, auth):
    ws = WebSocket(server.port, namespace=namespace)
    ws.hello()
    cred = credential(auth)
    if cred is not None:
        ws.send({"t": "d", "d": {"r": 1, "a": "gauth" if cred == "owner" else "auth", "b": {"cred": cred}}})
        assert ws.response(1)["s"] == "ok"
    return ws


def test_every_case_over_the_realtime_protocol(server):
    namespace = "rules-ws"
    for group in TABLE["groups"]:
        load(server, namespace, group)
        for i, case in enumerate(group["cases"]):
            label = f"{group['name']}, case {i + 1}"
            reset(server, namespace, group)
            ws = connect(server, namespace, case["auth"])
            path = case["path"].strip("/")
            if case["op"] == "read":
                body = {"p": "/" + path, "h": ""}
                q = wire_query(case.get("query"))
                if q:
                    body["q"], body["t"] = q, 1
                ws.send({"t": "d", "d": {"r": 2, "a": "q", "b": body}})
            elif case["op"] == "set":
                ws.send({"t": "d", "d": {"r": 2, "a": "p", "b": {"p": "/" + path, "d": case["value"]}}})
            else:
                ws.send({"t": "d", "d": {"r": 2, "a": "m", "b": {"p": "/" + path, "d": case["value"]}}})
            answer = ws.response(2)
            ws.close()
            assert answer["s"] == ("ok" if case["allow"] else "permission_denied"), f"{label}: {answer}"
            check_after(server, namespace, case, label)


def test_a_rules_change_cancels_listens_it_no_longer_allows(server):
    namespace = "rules-change"
    rules = {"rules": {"notes": {".read": "auth != null", ".write": "auth != null"}, "open": {".read": True}}}
    assert rest(server, "PUT", "/.settings/rules", namespace, rules, auth="owner")[0] == 200
    ws = connect(server, namespace, {"uid": "ada"})
    ws.send({"t": "d", "d": {"r": 2, "a": "q", "b": {"p": "/notes", "h": ""}}})
    assert ws.response(2)["s"] == "ok"
    ws.send({"t": "d", "d": {"r": 3, "a": "q", "b": {"p": "/open", "h": ""}}})
    assert ws.response(3)["s"] == "ok"
    rules["rules"]["notes"][".read"] = "auth.uid == 'bob'"
    assert rest(server, "PUT", "/.settings/rules", namespace, rules, auth="owner")[0] == 200
    while True:
        m = ws.message()
        if m.get("t") == "d" and m["d"].get("a") == "c":
            assert m["d"]["b"]["p"] == "notes", m
            break
    # The listen that is still allowed goes on.
    assert rest(server, "PUT", "/open/x", namespace, 1, auth="owner")[0] == 200
    while True:
        m = ws.message()
        if m.get("t") == "d" and m["d"].get("a") == "d":
            assert m["d"]["b"] == {"p": "open/x", "d": 1}, m
            break
    ws.close()


def test_a_rules_change_ends_a_rest_stream_with_cancel(server):
    namespace = "rules-stream"
    rules = {"rules": {"feed": {".read": True}}}
    assert rest(server, "PUT", "/.settings/rules", namespace, rules, auth="owner")[0] == 200
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall(f"GET /feed.json?ns={namespace} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
    seen = b""
    while b"event: put" not in seen:
        seen += s.recv(4096)
    assert rest(server, "PUT", "/.settings/rules", namespace, {"rules": {}}, auth="owner")[0] == 200
    while b"event: cancel" not in seen:
        chunk = s.recv(4096)
        assert chunk, seen
        seen += chunk
    s.close()


def test_expired_and_invalid_tokens(server):
    namespace = "rules-tokens"
    expired = token({"uid": "ada"}, expires_in=-10, alg="RS256")
    status, answer = rest(server, "GET", "/x", namespace, query={"auth": expired})
    assert status == 401 and b"expired" in answer
    status, answer = rest(server, "GET", "/x", namespace, query={"auth": "not-a-token"})
    assert status == 401 and b"Could not parse auth token" in answer
    ws = WebSocket(server.port, namespace=namespace)
    ws.hello()
    ws.send({"t": "d", "d": {"r": 1, "a": "auth", "b": {"cred": expired}}})
    assert ws.response(1)["s"] == "expired_token"
    ws.send({"t": "d", "d": {"r": 2, "a": "auth", "b": {"cred": "not-a-token"}}})
    assert ws.response(2)["s"] == "invalid_token"
    ws.close()
    # Credentials never reach the log.
    assert expired not in server.log() and "not-a-token" not in server.log()


def test_the_sdks_emulator_test_token_is_taken_as_the_emulator_takes_it(server):
    """mockUserToken's `exp` lies in 1970: the emulator takes it as it is, and so does rtdb serve,
    over the realtime protocol, REST (both ways of sending it) and a REST stream."""
    namespace = "rules-mock-token"
    rules = {"rules": {"users": {"$uid": {".read": "auth.uid == $uid", ".write": "auth.uid == $uid"}}}}
    assert rest(server, "PUT", "/.settings/rules", namespace, rules, auth="owner")[0] == 200
    alice = mock_user_token("alice")
    ws = WebSocket(server.port, namespace=namespace)
    ws.hello()
    ws.send({"t": "d", "d": {"r": 1, "a": "auth", "b": {"cred": alice}}})
    assert ws.response(1) == {"s": "ok", "d": ""}
    ws.send({"t": "d", "d": {"r": 2, "a": "p", "b": {"p": "/users/alice/name", "d": "Alice"}}})
    assert ws.response(2) == {"s": "ok", "d": ""}
    ws.send({"t": "d", "d": {"r": 3, "a": "p", "b": {"p": "/users/bob/name", "d": "Alice"}}})
    assert ws.response(3)["s"] == "permission_denied"
    ws.send({"t": "d", "d": {"r": 4, "a": "q", "b": {"p": "/users/alice", "h": ""}}})
    assert ws.response(4)["s"] == "ok"
    ws.close()
    query = {"auth": alice}
    assert rest(server, "PUT", "/users/alice/age", namespace, 36, query=query) == (200, b"36")
    status, answer = rest(server, "PUT", "/users/bob/age", namespace, 36, query=query)
    assert status == 401 and b"Permission denied" in answer
    bearer = {"Authorization": "Bearer " + alice}
    assert rest(server, "GET", "/users/alice", namespace, headers=bearer) == (200, b'{"age":36,"name":"Alice"}')
    assert rest(server, "GET", "/users/bob", namespace, headers=bearer)[0] == 401
    seen = stream_until(server, "/users/alice", namespace, alice, b'"data":{"age":36,"name":"Alice"}')
    assert seen.startswith(b"HTTP/1.1 200 OK")


def test_a_token_that_expires_while_connected_is_revoked(server):
    namespace = "rules-expiry"
    rules = {"rules": {"private": {".read": "auth != null"}}}
    assert rest(server, "PUT", "/.settings/rules", namespace, rules, auth="owner")[0] == 200
    ws = WebSocket(server.port, namespace=namespace)
    ws.hello()
    ws.send({"t": "d", "d": {"r": 1, "a": "auth", "b": {"cred": token({"uid": "ada"}, expires_in=2, alg="RS256")}}})
    assert ws.response(1)["s"] == "ok"
    ws.send({"t": "d", "d": {"r": 2, "a": "q", "b": {"p": "/private", "h": ""}}})
    assert ws.response(2)["s"] == "ok"
    actions = []
    while "c" not in actions:
        m = ws.message()
        if m.get("t") == "d" and "a" in m["d"]:
            actions.append(m["d"]["a"])
            if m["d"]["a"] == "ac":
                assert m["d"]["b"]["s"] == "expired_token"
    assert actions.index("ac") < actions.index("c")
    ws.close()


def test_rules_errors_name_line_and_column_and_keep_the_old_rules(server):
    namespace = "rules-errors"
    good = {"rules": {".read": True}}
    assert rest(server, "PUT", "/.settings/rules", namespace, good, auth="owner")[0] == 200
    text = '{\n  "rules": {\n    ".read": "auth.uid == ",\n  }\n}'
    status, _, answer = request(server.port, "PUT", f"/.settings/rules.json?ns={namespace}", text.encode(), OWNER)
    assert status == 400
    assert json.loads(answer)["error"] == "3:27: Parse error. in .read: expected a value, found the end of the expression; the rules were not changed"
    # What @firebase/rules-unit-testing sends in its own test of a file that does not parse.
    status, _, answer = request(server.port, "PUT", f"/.settings/rules.json?ns={namespace}", b"invalid json %{!@[", OWNER)
    assert (status, json.loads(answer)) == (400, {"error": "1:1: Parse error. unexpected 'i'; the rules were not changed"})
    status, _, answer = request(server.port, "GET", f"/.settings/rules.json?ns={namespace}", b"", OWNER)
    assert status == 200 and json.loads(answer) == good
    # Only the owner reads or changes them.
    assert request(server.port, "GET", f"/.settings/rules.json?ns={namespace}")[0] == 401
    assert request(server.port, "PUT", f"/.settings/rules.json?ns={namespace}", b'{"rules":{}}', {"Authorization": "Bearer " + token({"uid": "ada"})})[0] == 401


def test_serve_refuses_a_bad_rules_file_with_its_position(tmp_path):
    import subprocess
    from wire import BINARY
    rules = tmp_path / "rules.json"
    rules.write_text('{\n  // comment\n  "rules": { ".write": "newData.val() > " }\n}\n')
    result = subprocess.run([BINARY, "serve", "--port", "0", "--data", str(tmp_path / "data"), "--rules", str(rules)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stderr == f"rtdb serve: {rules}:3:41: in .write: expected a value, found the end of the expression\n"


def test_firebase_admin_as_owner_and_as_a_user(tmp_path):
    """The official Admin SDK: the owner credential passes every rule; with
    databaseAuthVariableOverride it is held to the rules as that user, and as no one with None."""
    import uuid
    import firebase_admin
    from firebase_admin import db, exceptions
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": {"users": {"$uid": {".read": "auth.uid == $uid", ".write": "auth.uid == $uid"}},
                                           "public": {".read": "auth == null || auth.uid != null"}}}))
    server = Server("--rules", str(rules))
    before = os.environ.get("FIREBASE_DATABASE_EMULATOR_HOST")
    os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = f"127.0.0.1:{server.port}"
    url = "https://admin-rules.firebaseio.com"
    apps = [firebase_admin.initialize_app(options={"databaseURL": url, **extra}, name="rules-" + uuid.uuid4().hex)
            for extra in ({}, {"databaseAuthVariableOverride": {"uid": "ada"}}, {"databaseAuthVariableOverride": None})]
    owner, ada, nobody = apps
    try:
        db.reference("/users/bob", app=owner).set({"name": "Bob"})
        db.reference("/public", app=owner).set("hello")
        db.reference("/users/ada", app=ada).set({"name": "Ada"})
        assert db.reference("/users/ada", app=ada).get() == {"name": "Ada"}
        with pytest.raises(exceptions.FirebaseError) as refused:
            db.reference("/users/bob", app=ada).get()
        assert "Permission denied" in str(refused.value)
        with pytest.raises(exceptions.FirebaseError):
            db.reference("/users/bob/name", app=ada).set("Eve")
        with pytest.raises(exceptions.FirebaseError):
            db.reference("/users/ada", app=nobody).get()
        assert db.reference("/public", app=nobody).get() == "hello"
        assert db.reference("/users", app=owner).get() == {"ada": {"name": "Ada"}, "bob": {"name": "Bob"}}
    finally:
        for app in apps:
            firebase_admin.delete_app(app)
        server.stop()
        if before is None:
            del os.environ["FIREBASE_DATABASE_EMULATOR_HOST"]
        else:
            os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = before


def test_ondisconnect_writes_are_checked_when_registered_and_when_they_run(server):
    namespace = "rules-ondisconnect"
    rules = {"rules": {"presence": {"$uid": {".read": True, ".write": "auth.uid == $uid",
                                              ".validate": "newData.isString() || !newData.exists()"}}}}
    assert rest(server, "PUT", "/.settings/rules", namespace, rules, auth="owner")[0] == 200
    ws = connect(server, namespace, {"uid": "ada"})
    ws.send({"t": "d", "d": {"r": 2, "a": "o", "b": {"p": "/presence/bob", "d": "offline"}}})
    assert ws.response(2)["s"] == "permission_denied"
    ws.send({"t": "d", "d": {"r": 3, "a": "o", "b": {"p": "/presence/ada", "d": 5}}})
    assert ws.response(3)["s"] == "permission_denied"
    ws.send({"t": "d", "d": {"r": 4, "a": "o", "b": {"p": "/presence/ada", "d": "offline"}}})
    assert ws.response(4)["s"] == "ok"
    ws.close()
    deadline = time.time() + 10
    while rest(server, "GET", "/presence/ada", namespace, auth="owner")[1] != b'"offline"':
        assert time.time() < deadline, "the onDisconnect write did not run"
        time.sleep(0.05)
    # Registered while allowed, refused when it runs: the rules changed meanwhile.
    ws = connect(server, namespace, {"uid": "ada"})
    ws.send({"t": "d", "d": {"r": 2, "a": "o", "b": {"p": "/presence/ada", "d": "gone"}}})
    assert ws.response(2)["s"] == "ok"
    rules["rules"]["presence"]["$uid"][".write"] = False
    assert rest(server, "PUT", "/.settings/rules", namespace, rules, auth="owner")[0] == 200
    ws.send({"t": "d", "d": {"r": 3, "a": "g", "b": {"p": "/presence/ada", "q": {}}}})
    assert ws.response(3)["s"] == "ok"  # the rules change is in force before the close
    ws.close()
    time.sleep(0.5)
    assert rest(server, "GET", "/presence/ada", namespace, auth="owner")[1] == b'"offline"'


def test_a_compare_and_set_the_rules_refuse_says_so_and_not_stale(server):
    namespace = "rules-cas"
    assert rest(server, "PUT", "/.settings/rules", namespace, {"rules": {"locked": {".read": True}}}, auth="owner")[0] == 200
    assert rest(server, "PUT", "/locked", namespace, 1, auth="owner")[0] == 200
    ws = connect(server, namespace, {"uid": "ada"})
    ws.send({"t": "d", "d": {"r": 2, "a": "p", "b": {"p": "/locked", "d": 2, "h": "not-the-hash"}}})
    assert ws.response(2)["s"] == "permission_denied"
    ws.close()
    # Over REST the same: an if-match write refused by the rules is 401, not 412.
    status, answer = rest(server, "PUT", "/locked", namespace, 2, auth={"uid": "ada"}, headers={"if-match": "wrong"})
    assert status == 401, answer


def test_a_rest_stream_ends_with_auth_revoked_when_its_token_expires(server):
    namespace = "rules-stream-expiry"
    assert rest(server, "PUT", "/.settings/rules", namespace, {"rules": {"feed": {".read": "auth != null"}}}, auth="owner")[0] == 200
    seen = stream_until(server, "/feed", namespace, token({"uid": "ada"}, expires_in=2, alg="RS256"), b"event: auth_revoked")
    assert b'event: auth_revoked\ndata: "the credential has expired"' in seen
    # Without a credential the stream is refused at once.
    status, _, answer = request(server.port, "GET", f"/feed.json?ns={namespace}", b"", {"Accept": "text/event-stream"})
    assert status == 401 and b"Permission denied" in answer


def test_an_unindexed_query_works_and_is_warned_of(server):
    namespace = "rules-index"
    rules = {"rules": {"dinos": {".read": True, ".indexOn": ["height"]}}}
    assert rest(server, "PUT", "/.settings/rules", namespace, rules, auth="owner")[0] == 200
    assert rest(server, "PUT", "/dinos", namespace, {"a": {"height": 3, "weight": 9}, "b": {"height": 1, "weight": 2}}, auth="owner")[0] == 200
    ws = connect(server, namespace, None)
    answers = []
    for r, q in ((2, {"i": "height", "l": 1, "vf": "l"}), (3, {"i": "weight", "l": 1, "vf": "l"}), (4, {"i": ".value", "l": 1, "vf": "l"}),
                 (5, {"i": ".key", "l": 1, "vf": "l"})):
        ws.send({"t": "d", "d": {"r": r, "a": "q", "b": {"p": "/dinos", "q": q, "t": r, "h": ""}}})
        answers.append(ws.response(r))
    ws.close()
    assert answers == [{"s": "ok", "d": ""}, {"s": "ok", "d": {"w": ["no_index"]}}, {"s": "ok", "d": {"w": ["no_index"]}}, {"s": "ok", "d": ""}]
    # The query still answers, over REST too.
    status, answer = rest(server, "GET", "/dinos", namespace, query={"orderBy": '"weight"', "limitToFirst": "1"})
    assert (status, json.loads(answer)) == (200, {"b": {"height": 1, "weight": 2}})


def test_a_listen_the_data_no_longer_allows_is_cancelled(server):
    namespace = "rules-data-revoke"
    rules = {"rules": {"rooms": {"$room": {".read": "data.child('members').hasChild(auth.uid)"}}}}
    assert rest(server, "PUT", "/.settings/rules", namespace, rules, auth="owner")[0] == 200
    assert rest(server, "PUT", "/rooms/r1", namespace, {"members": {"ada": True, "bob": True}, "topic": "x"}, auth="owner")[0] == 200
    ws = connect(server, namespace, {"uid": "ada"})
    ws.send({"t": "d", "d": {"r": 2, "a": "q", "b": {"p": "/rooms/r1", "h": ""}}})
    assert ws.response(2)["s"] == "ok"
    assert rest(server, "PUT", "/rooms/r1/topic", namespace, "y", auth="owner")[0] == 200  # still a member
    assert rest(server, "DELETE", "/rooms/r1/members/ada", namespace, auth="owner")[0] == 200
    while True:
        m = ws.message()
        if m.get("t") == "d" and m["d"].get("a") == "c":
            assert m["d"]["b"]["p"] == "rooms/r1", m
            break
    ws.close()


def test_a_stale_write_tells_the_current_value_only_to_who_may_read_it(server):
    namespace = "rules-stale"
    rules = {"rules": {"box": {".write": True}, "open": {".write": True, ".read": True}}}
    assert rest(server, "PUT", "/.settings/rules", namespace, rules, auth="owner")[0] == 200
    assert rest(server, "PUT", "/box", namespace, "secret", auth="owner")[0] == 200
    assert rest(server, "PUT", "/open", namespace, "visible", auth="owner")[0] == 200
    status, answer = rest(server, "PUT", "/box", namespace, 2, auth={"uid": "ada"}, headers={"if-match": "wrong"})
    assert status == 412 and b"secret" not in answer, answer
    status, answer = rest(server, "PUT", "/open", namespace, 2, auth={"uid": "ada"}, headers={"if-match": "wrong"})
    assert (status, answer) == (412, b'"visible"')


def test_rules_that_would_run_for_long_are_refused_and_named_in_the_log(server):
    """A pattern that tries thousands of threads at each of 16 KB, and replaces that multiply
    a string eightfold eight times: over the evaluation budget, the write is refused (it took
    22 s, and grew the server past 1.7 GB), the log names the rule, and the namespace serves on."""
    namespace = "rules-budget"
    eight = ".replace('a', 'aaaaaaaa')" * 8
    rules = {"rules": {".read": True, ".write": True,
                       "x": {".validate": "newData.val().matches(/([a-z]{0,1000}){9}0/)"},
                       "y": {".validate": f"newData.val(){eight}.length > 0"}}}
    assert rest(server, "PUT", "/.settings/rules", namespace, rules, auth="owner")[0] == 200
    for path, value in (("/x", "a" * 16384), ("/y", "a" * 1024)):
        status, answer = rest(server, "PUT", path, namespace, value, auth={"uid": "ada"})
        assert (status, json.loads(answer)) == (401, {"error": f"Permission denied: a rule at {path} ran over its evaluation budget on this data"})
        assert f"rules: a rule at {path} ran over the evaluation budget for a write at {path}; the write is refused" in server.log()
        assert rest(server, "GET", path, namespace, auth={"uid": "ada"}) == (200, b"null")
    # Short data under the same rules is evaluated as usual.
    assert rest(server, "PUT", "/x", namespace, "abc0", auth={"uid": "ada"}) == (200, b'"abc0"')
    assert rest(server, "PUT", "/y", namespace, "b", auth={"uid": "ada"}) == (200, b'"b"')
    assert server.rss_kb("VmHWM") < 1024 * 1024


def test_rules_check_endpoint_answers_the_owner_and_makes_nothing(tmp_path):
    """`POST /.settings/rules/check.json`: what the rules would say of a request, for the owner;
    a question about a namespace that does not exist makes none."""
    rules = tmp_path / "rules.json"
    rules.write_text('{"rules": {"users": {"$uid": {".write": "auth.uid == $uid", ".validate": "newData.child(\'n\').val() <= now"}}}}')
    server = Server("--rules", str(rules))
    try:
        def check(question, headers=OWNER, ns="checked"):
            status, _, body = request(server.port, "POST", f"/.settings/rules/check.json?ns={ns}", json.dumps(question).encode(), headers)
            return status, body

        ada = token({"uid": "ada"})
        status, body = check({"operation": "write", "path": "/users/ada", "value": {"n": {".sv": "timestamp"}}, "credential": ada})
        assert status == 200
        answer = json.loads(body)
        assert answer["allowed"] is True and answer["reason"] is None
        assert [step["rule"] for step in answer["trace"]] == ["/users/$uid/.write", "/users/$uid/.validate"]
        # The server value was resolved as a write's: the validate compared now with now.
        now = answer["trace"][1]["values"].split(" <= ")
        assert now[0] == now[1] and now[0].isdigit()

        assert check({"operation": "update", "path": "/users", "value": {"ada/n": 1, "bob/n": 1}, "credential": ada}) == (200, (
            b'{"allowed":false,"reason":"no .write rule allows this write","trace":['
            b'{"rule":"/users/$uid/.write","path":"/users/ada","text":"auth.uid == $uid","values":"\\"ada\\" == \\"ada\\"","result":true},'
            b'{"rule":"/users/$uid/.write","path":"/users/bob","text":"auth.uid == $uid","values":"\\"ada\\" == \\"bob\\"","result":false}]}'))
        # Other rules, given with the question.
        assert check({"operation": "read", "path": "/x", "credential": None, "rules": '{"rules": {".read": true}}'}) == \
            (200, b'{"allowed":true,"reason":null,"trace":[{"rule":"/.read","path":"/","text":"true","values":"true","result":true}]}')

        assert check({"operation": "read", "path": "/x", "credential": ada}, headers={"Authorization": "Bearer " + ada}) == \
            (401, b'{"error":"Permission denied: only the owner may check the rules"}')
        assert check({"operation": "delete", "path": "/x"}) == \
            (400, b'{"error":"Invalid rules check: \\"operation\\" must be \\"read\\", \\"write\\" or \\"update\\""}')
        assert check({"operation": "write", "path": "/x"}) == \
            (400, b'{"error":"Invalid rules check: a write needs its \\"value\\" (null to remove)"}')
        assert check({"operation": "write", "path": "/a.b", "value": 1}) == \
            (400, b'{"error":"Invalid rules check: invalid key \\"a.b\\" in \\"/a.b\\": keys must not contain \\".\\", \\"$\\", \\"#\\", \\"[\\", \\"]\\" or \\"/\\" (found \\".\\")"}')
        assert check({"operation": "read", "path": "/x", "credential": "not a token"}) == \
            (400, b'{"error":"Invalid rules check: the credential is refused: the credential is neither \\"owner\\" nor a JSON Web Token"}')
        assert check({"operation": "read", "path": "/x", "rules": '{"rules": {".read": "auth.uid =="}}'}) == \
            (400, b'{"error":"1:33: Parse error. in .read: expected a value, found the end of the expression"}')
        assert request(server.port, "GET", "/.settings/rules/check.json?ns=checked", headers=OWNER)[::2] == \
            (405, b'{"error":"a rules check is a POST of the question"}')
        assert not os.path.exists(os.path.join(server.data, "checked"))

        def raw(body):
            status, _, answer = request(server.port, "POST", "/.settings/rules/check.json?ns=checked", body, OWNER)
            return status, json.loads(answer)["error"]
        assert raw(b"\xff\xfe") == (400, 'Invalid rules check: the body must be a JSON object: {"operation": "read", "path": "/a", …}')
        assert raw(b"[1]")[0] == 400
        assert raw(json.dumps({"operation": "update", "path": "/users", "value": {}}).encode()) == \
            (400, "Invalid rules check: an update needs at least one path to write")
        status, reason = raw(json.dumps({"operation": "update", "path": "/users", "value": {"ada": 1, "ada/n": 2}}).encode())
        assert status == 400 and "ada" in reason, reason
        status, reason = raw(json.dumps({"operation": "write", "path": "/.info/x", "value": 1}).encode())
        assert status == 400 and ".info" in reason, reason
        # A priority is written under its node's rules.
        assert check({"operation": "write", "path": "/users/ada/.priority", "value": 3, "credential": ada})[0] == 200
        assert check({"operation": "read", "path": "/.info/connected", "credential": None}) == (200, b'{"allowed":true,"reason":null,"trace":[]}')
    finally:
        server.stop()
