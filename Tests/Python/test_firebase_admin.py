"""rtdb serve driven by the official firebase-admin SDK over REST and streaming."""
import threading
import time

import pytest
from firebase_admin import db

from wire import close_listener, event_collector, wait_until


def test_set_get_and_types(ref):
    value = {"name": "Ada", "born": 1815, "active": True, "ratio": 0.5, "tags": ["a", "b"]}
    ref.set(value)
    assert ref.get() == value
    assert ref.child("tags").get() == ["a", "b"]
    assert ref.child("missing").get() is None


def test_update_is_multi_path_and_atomic(ref):
    ref.set({"a": {"x": 1, "y": 2}, "b": 3})
    ref.update({"a/x": 10, "b": None, "c/d": "new"})
    assert ref.get() == {"a": {"x": 10, "y": 2}, "c": {"d": "new"}}


def test_push_keys_are_chronological(ref):
    keys = [ref.push({"n": i}).key for i in range(5)]
    assert keys == sorted(keys)
    assert all(len(k) == 20 for k in keys)
    assert [v["n"] for v in ref.get().values()] == [0, 1, 2, 3, 4]


def test_delete(ref):
    ref.set({"a": 1, "b": 2})
    ref.child("a").delete()
    assert ref.get() == {"b": 2}
    ref.delete()
    assert ref.get() is None


def test_shallow_get(ref):
    ref.set({"a": {"deep": 1}, "b": 2})
    assert ref.get(shallow=True) == {"a": True, "b": True}


@pytest.fixture
def notes(ref):
    ref.set({f"n{i}": {"lastModified": i * 10, "title": f"note {i}", "score": i % 3} for i in range(1, 7)})
    return ref


def test_order_by_child_limit_to_last(notes):
    result = notes.order_by_child("lastModified").limit_to_last(2).get()
    assert list(result.keys()) == ["n5", "n6"]


def test_order_by_child_ranges(notes):
    result = notes.order_by_child("lastModified").start_at(20).end_at(40).get()
    assert list(result.keys()) == ["n2", "n3", "n4"]
    result = notes.order_by_child("score").equal_to(0).get()
    assert sorted(result.keys()) == ["n3", "n6"]


def test_order_by_key(notes):
    assert list(notes.order_by_key().limit_to_first(2).get().keys()) == ["n1", "n2"]
    assert list(notes.order_by_key().start_at("n5").get().keys()) == ["n5", "n6"]
    assert list(notes.order_by_key().end_at("n2").get().keys()) == ["n1", "n2"]


def test_order_by_value(ref):
    ref.set({"a": 3, "b": 1, "c": 2, "d": 1})
    assert list(ref.order_by_value().limit_to_first(3).get().keys()) == ["b", "d", "c"]
    assert sorted(ref.order_by_value().equal_to(1).get().keys()) == ["b", "d"]


def test_etag_conditional_writes(ref):
    ref.set(1)
    value, etag = ref.get(etag=True)
    assert value == 1
    assert ref.set_if_unchanged(etag, 2)[0] is True
    success, current, _ = ref.set_if_unchanged(etag, 3)
    assert success is False and current == 2
    changed, value, new_etag = ref.get_if_changed(etag)
    assert changed is True and value == 2
    assert ref.get_if_changed(new_etag) == (False, None, None)


def test_transaction_under_contention(ref):
    ref.set(0)
    threads, each = 4, 10

    def work():
        for _ in range(each):
            ref.transaction(lambda current: (current or 0) + 1)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert ref.get() == threads * each


def test_admin_and_rtdb_transactions_share_a_counter(ref, server, binary):
    """firebase-admin's ETag transactions and `rtdb tx` processes on one counter at once:
    every transaction of both kinds commits, and none is lost."""
    import subprocess
    ref.set(0)
    processes, lines = 8, 250
    script = "".join("tx %s '$ + 1'\n" % ref.path if i % 2 == 0 else "tx %s --increment 1\n" % ref.path
                     for i in range(lines))
    url = "ws://127.0.0.1:%d?ns=admin-suite" % server["port"]
    shells = [subprocess.Popen([binary, "--url", url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for _ in range(processes)]
    threads, each = 2, 25
    failures = []

    def work():
        for _ in range(each):
            try:
                ref.transaction(lambda current: (current or 0) + 1)
            except Exception as error:  # reported below, with the shells' results
                failures.append(repr(error))

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    results = [shell.communicate(script, timeout=300) for shell in shells]
    for w in workers:
        w.join()
    for shell, (out, err) in zip(shells, results):
        assert shell.returncode == 0, err
        assert err == ""
        assert len(out.split()) == lines
    assert failures == []
    assert ref.get() == processes * lines + threads * each


def test_listen_streams_put_and_patch(ref):
    ref.set({"a": 1})
    events, arrived, on_event = event_collector(4)
    registration = ref.listen(on_event)
    try:
        # The stream is open once its first event (the value as it is) has come.
        assert wait_until(lambda: len(events) >= 1), events
        ref.child("b").set(2)
        ref.update({"c": 3, "d/e": 4})
        ref.child("a").delete()
        assert arrived.wait(10), events
    finally:
        close_listener(registration, ref.child("wake"))
    assert events[0] == ("put", "/", {"a": 1})
    assert events[1] == ("put", "/b", 2)
    assert events[2] == ("patch", "/", {"c": 3, "d/e": 4})
    assert events[3] == ("put", "/a", None)


def test_invalid_input_is_a_clear_error(ref):
    from firebase_admin import exceptions
    with pytest.raises(ValueError):
        ref.child("bad.key")  # the SDK's own check
    with pytest.raises(exceptions.InvalidArgumentError) as error:
        ref.set({"a.b": 1})
    assert "invalid key" in str(error.value)
    assert ref.get() is None
