"""The data viewer `rtdb serve` shows at `/`, driven in headless Chromium as a person uses it:
a node opened, a value another client writes shown highlighted, nothing loaded from elsewhere."""
import json
import os
import re
import subprocess
import tempfile
import time
import uuid

import pytest

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


@pytest.fixture
def browser():
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,800"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    yield driver
    driver.quit()


def row(browser, path, timeout=10):
    """The tree row of `path` once it is shown."""
    return WebDriverWait(browser, timeout).until(
        lambda b: (b.find_elements(By.CSS_SELECTOR, f'li[data-path="{path}"] > .row') or [False])[0])


def text(browser, path):
    """The row's text now ("" when it is not shown), without the tools a pointer over it shows."""
    found = browser.find_elements(By.CSS_SELECTOR, f'li[data-path="{path}"] > .row')
    return re.sub(r"(\s*\b(add|rename|clone|export|import|delete))+$", "", found[0].text) if found else ""


def shown(browser, path):
    """The row's text once it is shown."""
    row(browser, path)
    return text(browser, path)


# Every highlight the page makes, in order, as "PATH KIND": a flash lasts a second or two,
# so the test reads the page's record of them rather than catching each one.
RECORD_FLASHES = """
window.flashes = [];
window.removedText = {};
new MutationObserver((changes) => {
  for (const change of changes) {
    const row = change.target;
    if (!row.classList || !row.classList.contains("row")) continue;
    const before = (change.oldValue || "").split(" ");
    for (const kind of ["added", "changed", "removed"]) {
      const entry = row.parentElement.dataset.path + " " + kind;
      // One flash makes two records (its class taken off, then put on), read together.
      if (row.classList.contains(kind) && !before.includes(kind) && window.flashes[window.flashes.length - 1] !== entry) window.flashes.push(entry);
      if (kind === "removed" && row.classList.contains(kind)) window.removedText[row.parentElement.dataset.path] = row.textContent;
    }
  }
}).observe(document.body, { subtree: true, attributes: true, attributeOldValue: true, attributeFilter: ["class"] });
"""


def flashes(browser):
    return browser.execute_script("return window.flashes")


def test_a_node_opened_follows_changes_highlighted(server, app, browser):
    from firebase_admin import db
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({"a": 1, "b": {"c": "x"}, "list": ["p", "q", "r"]})
    origin = f"http://127.0.0.1:{server['port']}"
    browser.get(origin + "/?ns=admin-suite")
    row(browser, "/" + top).find_element(By.CLASS_NAME, "toggle").click()
    assert shown(browser, f"/{top}/a") == "a 1"
    assert shown(browser, f"/{top}/b") == "▸b {1 child}"
    browser.execute_script(RECORD_FLASHES)
    # Another client's writes show within a second, highlighted.
    db.reference(f"/{top}/a", app=app).set(2)
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/a") == "a 2")
    db.reference(f"/{top}/d", app=app).set(True)
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/d") == "d true")
    db.reference(f"/{top}/a", app=app).delete()
    WebDriverWait(browser, 5).until(lambda b: f"/{top}/a removed" in flashes(b))
    assert flashes(browser) == [f"/{top}/a changed", f"/{top}/d added", f"/{top}/a removed"], flashes(browser)
    # A row on its way out shows what it held, struck through (its toggle hidden, a leaf's).
    assert browser.execute_script("return window.removedText")[f"/{top}/a"] == "▸a 2 add rename clone export import delete "
    # A child opened in turn shows what the stream holds of it, and follows it; a list keeps
    # the keys it has (a sparse one shows no empty rows).
    row(browser, f"/{top}/b").find_element(By.CLASS_NAME, "toggle").click()
    assert shown(browser, f"/{top}/b/c") == 'c "x"'
    db.reference(f"/{top}/b/c", app=app).set("y")
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/b/c") == 'c "y"')
    assert f"/{top}/b/c changed" in flashes(browser)
    db.reference(f"/{top}/list/1", app=app).delete()
    row(browser, f"/{top}/list").find_element(By.CLASS_NAME, "toggle").click()
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/list/2") == '2 "r"')
    assert text(browser, f"/{top}/list/1") == ""
    folder = os.environ.get("RTDB_ARTIFACTS", tempfile.gettempdir())
    os.makedirs(folder, exist_ok=True)
    browser.save_screenshot(os.path.join(folder, "viewer.png"))
    # Everything the page loaded came from this server, and nothing was refused.
    resources = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert resources and all(url.startswith(origin + "/") for url in resources), resources
    problems = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert problems == []


def test_more_children_a_page_at_a_time(server, app, browser):
    """50 children at a time; a child the window takes in or leaves behind does not flash."""
    from firebase_admin import db
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({f"k{i:03d}": i for i in range(120)})
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite")
    row(browser, "/" + top).find_element(By.CLASS_NAME, "toggle").click()
    row(browser, f"/{top}/k049")
    count = lambda b: len(b.find_elements(By.CSS_SELECTOR, f'li[data-path^="/{top}/"]'))
    assert count(browser) == 50
    browser.execute_script(RECORD_FLASHES)
    db.reference(f"/{top}/k010", app=app).delete()
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/k050") == "k050 50")
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/k010") == "")
    assert flashes(browser) == [f"/{top}/k010 removed"]
    browser.find_element(By.CSS_SELECTOR, f'li[data-path="/{top}"] > button.more').click()
    WebDriverWait(browser, 5).until(lambda b: count(b) == 100)


def test_a_value_edited_in_place_and_nodes_deleted(server, app, browser):
    """Double-click a value: JSON, checked before it is written; × deletes, an object once confirmed."""
    from firebase_admin import db
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.common.action_chains import ActionChains
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({"a": 1, "b": {"c": "x"}, "d": "gone soon"})
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite")
    row(browser, "/" + top).find_element(By.CLASS_NAME, "toggle").click()
    value = row(browser, f"/{top}/a").find_element(By.CLASS_NAME, "number")
    ActionChains(browser).double_click(value).perform()
    # The field comes once the value is read again (with its priority and ETag).
    field = WebDriverWait(browser, 5).until(lambda b: row(b, f"/{top}/a").find_element(By.CSS_SELECTOR, "input.edit"))
    assert field.get_attribute("value") == "1"
    field.send_keys(Keys.END, " 2", Keys.ENTER)
    # The mistake is said where it is, and selected there.
    problem = row(browser, f"/{top}/a").find_element(By.CLASS_NAME, "problem")
    assert problem.text == "column 3: more text after the value"
    assert browser.execute_script("const f = document.activeElement; return [f.selectionStart, f.selectionEnd]") == [2, 3]
    assert db.reference(f"/{top}/a", app=app).get() == 1
    field.clear()
    field.send_keys('{"x": 5}', Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/a") == "▸a {1 child}")
    assert db.reference(f"/{top}/a", app=app).get() == {"x": 5}
    # A leaf goes at once; an object once confirmed.
    ActionChains(browser).move_to_element(row(browser, f"/{top}/d")).perform()
    row(browser, f"/{top}/d").find_element(By.CSS_SELECTOR, "button.delete").click()
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/d") in ("", 'd "gone soon"') and db.reference(f"/{top}/d", app=app).get() is None)
    ActionChains(browser).move_to_element(row(browser, f"/{top}/b")).perform()
    row(browser, f"/{top}/b").find_element(By.CSS_SELECTOR, "button.delete").click()
    alert = WebDriverWait(browser, 5).until(lambda b: b.switch_to.alert)
    assert alert.text == f"Delete /{top}/b and its 1 child?"
    alert.accept()
    WebDriverWait(browser, 5).until(lambda b: db.reference(f"/{top}/b", app=app).get() is None)
    assert db.reference("/" + top, app=app).get() == {"a": {"x": 5}}


def test_a_child_added_and_pushed(server, app, browser):
    """+ on a row: a key and a JSON value, checked first; no key is a push."""
    from firebase_admin import db
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.common.action_chains import ActionChains
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({"a": 1})
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite")
    ActionChains(browser).move_to_element(row(browser, "/" + top)).perform()
    row(browser, "/" + top).find_element(By.CSS_SELECTOR, "button.add").click()
    form = browser.find_element(By.CSS_SELECTOR, f'li[data-path="/{top}"] > .form')
    key, value = form.find_element(By.CLASS_NAME, "key-input"), form.find_element(By.CLASS_NAME, "value-input")
    key.send_keys("a/b")
    value.send_keys("1", Keys.ENTER)
    assert form.find_element(By.CLASS_NAME, "problem").text == "a key may not contain . $ # [ ] / or a control character"
    key.clear()
    key.send_keys("e")
    value.clear()
    value.send_keys('{"f": 1}', Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/e") == "▸e {1 child}")
    assert db.reference(f"/{top}/e", app=app).get() == {"f": 1}
    ActionChains(browser).move_to_element(row(browser, "/" + top)).perform()
    row(browser, "/" + top).find_element(By.CSS_SELECTOR, "button.add").click()
    form = browser.find_element(By.CSS_SELECTOR, f'li[data-path="/{top}"] > .form')
    form.find_element(By.CLASS_NAME, "value-input").send_keys('"pushed"', Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda b: len(db.reference("/" + top, app=app).get()) == 3)
    pushed = [k for k in db.reference("/" + top, app=app).get() if k not in ("a", "e")]
    assert len(pushed) == 1 and len(pushed[0]) == 20 and db.reference(f"/{top}/{pushed[0]}", app=app).get() == "pushed"
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/{pushed[0]}") == f'{pushed[0]} "pushed"')


def test_the_viewer_is_shown_only_where_the_server_takes_pages_from(server):
    import http.client
    for host, status in [("127.0.0.1", 200), ("localhost", 200), ("10.0.0.7", 403)]:
        connection = http.client.HTTPConnection("127.0.0.1", server["port"], timeout=10)
        connection.request("GET", "/", headers={"Host": f"{host}:{server['port']}"})
        response = connection.getresponse()
        body = response.read().decode()
        assert response.status == status, (host, body)
        connection.close()
    assert "the data viewer reads as the owner" in body


def test_no_viewer(binary):
    data = tempfile.mkdtemp(prefix="rtdb-viewer-")
    process = subprocess.Popen([binary, "serve", "--port", "0", "--data", data, "--no-viewer"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+) ", process.stdout.readline()).group(1))
        import urllib.request, urllib.error
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/")
        assert refused.value.code == 404
    finally:
        process.terminate()
        process.wait(timeout=30)


def open_tool(browser, path, tool):
    """Clicks a row's tool (add, rename, clone, import, delete) as a pointer over the row shows it."""
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(browser).move_to_element(row(browser, path)).perform()
    row(browser, path).find_element(By.CSS_SELECTOR, f".tools .{tool}").click()
    return browser.find_element(By.CSS_SELECTOR, f'li[data-path="{path}"] > .form')


def rest(server, path, namespace="admin-suite"):
    """The body and headers of a REST read of `path`, as the owner."""
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{server['port']}{path}{'&' if '?' in path else '?'}ns={namespace}&auth=owner") as answer:
        return answer.read().decode(), answer.headers


def test_rename_and_clone_are_one_guarded_update(server, app, browser):
    """rename and clone: the value moves (priorities kept) or is copied in one update; a write by
    another client between the read and the update is said, and nothing is written."""
    from firebase_admin import db
    from selenium.webdriver.common.keys import Keys
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({"a": {"x": 1}, "b": 2})
    db.reference(f"/{top}/a", app=app).set({"x": 1, ".priority": 7})
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite")
    row(browser, "/" + top).find_element(By.CLASS_NAME, "toggle").click()
    form = open_tool(browser, f"/{top}/a", "rename")
    field = form.find_element(By.CLASS_NAME, "key-input")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("b", Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda b: form.find_element(By.CLASS_NAME, "problem").text)
    assert form.find_element(By.CLASS_NAME, "problem").text == f"/{top}/b already exists: delete it first, or choose another key"
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("moved", Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/moved") == "▸moved {1 child}" and text(b, f"/{top}/a") == "")
    assert json.loads(rest(server, f"/{top}.json?format=export")[0]) == {"b": 2, "moved": {".priority": 7, "x": 1}}
    form = open_tool(browser, f"/{top}/moved", "clone")
    assert form.find_element(By.CLASS_NAME, "key-input").get_attribute("value") == "moved-copy"
    form.find_element(By.CLASS_NAME, "key-input").send_keys(Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/moved-copy") == "▸moved-copy {1 child}")
    assert db.reference("/" + top, app=app).get() == {"b": 2, "moved": {"x": 1}, "moved-copy": {"x": 1}}
    # Another writer changes the source after the page read it: the update is refused whole.
    browser.execute_script("""
      const original = window.fetch;
      window.fetch = async (address, init) => {
        if (init && init.method === "PATCH") {
          window.fetch = original;
          await original(address.replace(/\\/?\\.json\\?/, "/b.json?"), { method: "PUT", body: "3" });
        }
        return original(address, init);
      };""")
    form = open_tool(browser, f"/{top}/b", "rename")
    field = form.find_element(By.CLASS_NAME, "key-input")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("c", Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda b: form.find_element(By.CLASS_NAME, "problem").text)
    assert form.find_element(By.CLASS_NAME, "problem").text == \
        f"nothing was written: the data at /{top}/b changed since it was read; try again to rename what is there now"
    assert db.reference("/" + top, app=app).get() == {"b": 3, "moved": {"x": 1}, "moved-copy": {"x": 1}}
    # Keys past ASCII: the guards travel escaped, and hold.
    db.reference(f"/{top}/café", app=app).set(1)
    form = open_tool(browser, f"/{top}/café", "rename")
    field = form.find_element(By.CLASS_NAME, "key-input")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("ключ", Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/ключ") == "ключ 1" and text(b, f"/{top}/café") == "")
    assert db.reference("/" + top, app=app).get() == {"b": 3, "moved": {"x": 1}, "moved-copy": {"x": 1}, "ключ": 1}


def test_an_object_edited_whole(server, app, browser):
    """Double-click an object's count: its JSON (with priorities) in a text area; a mistake is
    said at its line and column and selected there; Ctrl+Enter writes it."""
    from firebase_admin import db
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.common.action_chains import ActionChains
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({"o": {"x": 1, "y": [1, 2]}})
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite")
    row(browser, "/" + top).find_element(By.CLASS_NAME, "toggle").click()
    ActionChains(browser).double_click(row(browser, f"/{top}/o").find_element(By.CLASS_NAME, "count")).perform()
    area = WebDriverWait(browser, 5).until(lambda b: b.find_element(By.CSS_SELECTOR, f'li[data-path="/{top}/o"] > .form textarea'))
    assert json.loads(area.get_attribute("value")) == {"x": 1, "y": [1, 2]}
    browser.execute_script('arguments[0].value = "{\\n  \\"x\\": 1,\\n  \\"y\\": [1, 2,]\\n}"', area)
    area.send_keys(Keys.CONTROL, Keys.ENTER)
    problem = browser.find_element(By.CSS_SELECTOR, f'li[data-path="/{top}/o"] > .form .problem')
    WebDriverWait(browser, 5).until(lambda b: problem.text)
    assert problem.text == "line 3, column 14: expected a value: an object, array, string, number, true, false or null"
    assert browser.execute_script("const f = document.activeElement; return [f.selectionStart, f.selectionEnd]") == [25, 26]
    assert db.reference(f"/{top}/o", app=app).get() == {"x": 1, "y": [1, 2]}
    browser.execute_script('arguments[0].value = "{\\"x\\": 2, \\"z\\": true}"', area)
    area.send_keys(Keys.CONTROL, Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda b: db.reference(f"/{top}/o", app=app).get() == {"x": 2, "z": True})
    WebDriverWait(browser, 5).until(lambda b: not b.find_elements(By.CSS_SELECTOR, f'li[data-path="/{top}/o"] > .form'))


def test_a_file_imported_and_a_path_exported(server, app, browser):
    """⤒: a file with a mistake writes nothing and says where; a good one replaces the path (or
    merges); one over 8 MB goes in parts, all checked first. ⤓ downloads the path as JSON."""
    from firebase_admin import db
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({"kept": 1})
    folder = tempfile.mkdtemp(prefix="rtdb-import-")
    bad, good, merge, big = (os.path.join(folder, name) for name in ["bad.json", "good.json", "merge.json", "big.json"])
    with open(bad, "w") as f:
        f.write('{\n  "a": 1,\n  "b": tru\n}\n')
    with open(good, "w") as f:
        f.write('{"a": 1, "b": {"c": "x"}}')
    with open(merge, "w") as f:
        f.write('{"d": [1, 2]}')
    with open(big, "w") as f:
        f.write("{\n" + ",\n".join(f'"k{i:06d}": {{"n": {i}, "pad": "{"x" * 40}"}}' for i in range(150000)) + "\n}\n")
    assert os.path.getsize(big) > 8 << 20
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite")

    def run(name, path, merging=False):
        form = open_tool(browser, f"/{top}", "import")
        form.find_element(By.CLASS_NAME, "file-input").send_keys(path)
        if merging:
            form.find_element(By.CLASS_NAME, "merge-input").click()
        form.find_element(By.CLASS_NAME, "start").click()
        WebDriverWait(browser, 60).until(lambda b: form.find_element(By.CLASS_NAME, "problem").text or "imported" in form.text)
        return form.find_element(By.CLASS_NAME, "problem").text, form.find_element(By.CLASS_NAME, "said").text

    assert run("bad", bad) == ("bad.json: line 3, column 8: expected a value: an object, array, string, number, true, false or null; nothing was written", "")
    assert db.reference("/" + top, app=app).get() == {"kept": 1}
    problem, said = run("good", good)
    assert problem == "" and re.fullmatch(rf"imported good\.json \(25 bytes\) into /{top} in one write, \d+\.\d s", said), said
    assert db.reference("/" + top, app=app).get() == {"a": 1, "b": {"c": "x"}}
    run("merge", merge, merging=True)
    assert db.reference("/" + top, app=app).get() == {"a": 1, "b": {"c": "x"}, "d": [1, 2]}
    problem, said = run("big", big)
    assert problem == "" and re.fullmatch(rf"imported big\.json \(\d+\.\d MB\) into /{top} in [5-9] writes, \d+(\.\d)? s", said), said
    written = db.reference("/" + top, app=app).get(shallow=True)
    assert len(written) == 150000 and db.reference(f"/{top}/k149999", app=app).get() == {"n": 149999, "pad": "x" * 40}
    # Export: the path's JSON, priorities kept, saved under its key's name.
    db.reference(f"/{top}", app=app).set({"p": 1})
    db.reference(f"/{top}/q", app=app).set({".value": "v", ".priority": 2})
    link = row(browser, "/" + top).find_element(By.CSS_SELECTOR, ".tools a.export")
    assert link.get_attribute("download") == top + ".json"
    import urllib.request
    with urllib.request.urlopen(link.get_attribute("href")) as answer:
        assert json.loads(answer.read()) == {"p": 1, "q": {".priority": 2, ".value": "v"}}
        assert answer.headers["Content-Disposition"] == f'attachment; filename="{top}.json"'


def query_results(browser):
    return [[cell.text for cell in tr.find_elements(By.TAG_NAME, "td")]
            for tr in browser.find_elements(By.CSS_SELECTOR, "#query-results tbody tr:not(.removed)")]


def test_a_query_in_order_and_live(server, app, browser):
    """The Query tab: every order, bounds with a key, limits from either end; the children in the
    query's order, following changes; a query the server refuses says why."""
    from firebase_admin import db
    from selenium.webdriver.support.ui import Select
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({"a": {"score": 3}, "b": {"score": 1}, "c": {"score": 2}, "d": {"score": 5}, "e": {"other": 0}})
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite#query")
    form = browser.find_element(By.ID, "query-form")

    def ask(order, child="", start=None, end=None, limit=None):
        field = lambda name: form.find_element(By.NAME, name)
        field("path").clear()
        field("path").send_keys("/" + top)
        Select(field("order")).select_by_value(order)
        if order == "child":
            field("child").clear()
            field("child").send_keys(child)
        for (select, value, key), bound in [(("start", "startValue", "startKey"), start), (("end", "endValue", "endKey"), end)]:
            Select(field(select)).select_by_value(bound[0] if bound else "")
            field(value).clear()
            field(key).clear()
            if bound:
                field(value).send_keys(bound[1])
                if len(bound) > 2:
                    field(key).send_keys(bound[2])
        Select(field("limit")).select_by_value(limit[0] if limit else "")
        if limit:
            field("count").clear()
            field("count").send_keys(str(limit[1]))
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

    ask("child", "score", limit=("limitToLast", 3))
    WebDriverWait(browser, 5).until(lambda b: len(query_results(b)) == 3)
    assert query_results(browser) == [["1", "c", "2", '{"score":2}'], ["2", "a", "3", '{"score":3}'], ["3", "d", "5", '{"score":5}']]
    assert browser.find_element(By.ID, "query-request").text == f'GET /{top}.json?orderBy="score"&limitToLast=3'
    browser.execute_script(RECORD_QUERY_FLASHES)
    db.reference(f"/{top}/b/score", app=app).set(10)
    WebDriverWait(browser, 5).until(lambda b: [r[1] for r in query_results(b)] == ["a", "d", "b"])
    WebDriverWait(browser, 5).until(lambda b: "c removed" in b.execute_script("return window.queryFlashes"))
    assert browser.execute_script("return window.queryFlashes") == ["b added", "c removed"]
    ask("key", start=("startAt", "b"), end=("endBefore", "d"))
    WebDriverWait(browser, 5).until(lambda b: [r[1] for r in query_results(b)] == ["b", "c"])
    ask("child", "score", start=("startAt", "3", "a"), end=("endAt", "10"))
    WebDriverWait(browser, 5).until(lambda b: [r[1] for r in query_results(b)] == ["a", "d", "b"])
    ask("child", "score", start=("startAfter", "3", "a"))
    WebDriverWait(browser, 5).until(lambda b: [r[1] for r in query_results(b)] == ["d", "b"])
    db.reference(f"/{top}/v", app=app).set({"a": 2, "b": "x", "c": True, "d": 1, "e": {"z": 1}})
    db.reference(f"/{top}/v/d", app=app).set({".value": 1, ".priority": "p"})
    db.reference(f"/{top}/v/a", app=app).set({".value": 2, ".priority": 5})
    form.find_element(By.NAME, "path").clear()
    form.find_element(By.NAME, "path").send_keys(f"/{top}/v")
    Select(form.find_element(By.NAME, "order")).select_by_value("value")
    for name in ["start", "end", "limit"]:
        Select(form.find_element(By.NAME, name)).select_by_value("")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, 5).until(lambda b: [r[1] for r in query_results(b)] == ["c", "d", "a", "b", "e"])
    Select(form.find_element(By.NAME, "order")).select_by_value("priority")
    Select(form.find_element(By.NAME, "start")).select_by_value("equalTo")
    form.find_element(By.NAME, "startValue").clear()
    form.find_element(By.NAME, "startValue").send_keys("5")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, 5).until(lambda b: query_results(b) == [["1", "a", "5", "2"]])
    form.find_element(By.NAME, "startValue").clear()
    form.find_element(By.NAME, "startValue").send_keys("5 6")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    assert browser.find_element(By.ID, "query-problem").text == "equalTo: column 3: more text after the value"
    # A query the server refuses says why, in the server's words.
    ask("child", "score", start=("startAt", "{}"))
    WebDriverWait(browser, 5).until(lambda b: b.find_element(By.ID, "query-problem").text)
    assert browser.find_element(By.ID, "query-problem").text == \
        "startAt must be a JSON string, number, boolean or null, optionally followed by a JSON string key"


RECORD_QUERY_FLASHES = """
window.queryFlashes = [];
new MutationObserver((changes) => {
  for (const change of changes) {
    const row = change.target;
    if (row.tagName !== "TR") continue;
    const before = (change.oldValue || "").split(" ");
    for (const kind of ["added", "changed", "removed"]) {
      const entry = row.dataset.key + " " + kind;
      if (row.classList.contains(kind) && !before.includes(kind) && window.queryFlashes[window.queryFlashes.length - 1] !== entry) window.queryFlashes.push(entry);
    }
  }
}).observe(document.getElementById("query-results"), { subtree: true, attributes: true, attributeOldValue: true, attributeFilter: ["class"] });
"""


def test_the_rules_tab_says_where_a_mistake_is_and_shows_coverage(server, browser):
    """Rules edited: a mistake is said at its line and column and selected, the old rules kept;
    good rules are saved and in force; the coverage shows what requests made of them."""
    import urllib.request, urllib.error
    namespace = "viewer-rules-" + uuid.uuid4().hex[:6]
    browser.get(f"http://127.0.0.1:{server['port']}/?ns={namespace}#rules")
    area = browser.find_element(By.ID, "rules-text")
    WebDriverWait(browser, 5).until(lambda b: area.get_attribute("value"))
    rules = '{\n  "rules": {\n    ".read": true,\n    ".write": "auth != null &&"\n  }\n}'
    browser.execute_script("arguments[0].value = arguments[1]", area, rules)
    browser.find_element(By.ID, "rules-save").click()
    problem = browser.find_element(By.ID, "rules-problem")
    WebDriverWait(browser, 5).until(lambda b: problem.text)
    assert re.fullmatch(r"line 4, column \d+: .+; the rules were not changed", problem.text), problem.text
    # The server's line and column, selected in the text.
    line, column = (int(n) for n in re.match(r"line (\d+), column (\d+)", problem.text).groups())
    expected = sum(len(text) + 1 for text in rules.split("\n")[:line - 1]) + column - 1
    assert browser.execute_script("return document.activeElement.selectionStart") == expected
    rules = '{\n  "rules": {\n    ".read": true,\n    ".write": "auth != null"\n  }\n}'
    browser.execute_script("arguments[0].value = arguments[1]", area, rules)
    browser.find_element(By.ID, "rules-save").click()
    WebDriverWait(browser, 5).until(lambda b: problem.text == "saved: the new rules are in force")
    port = server["port"]
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/x.json?ns={namespace}", data=b"1", method="PUT"))
    assert refused.value.code == 401
    urllib.request.urlopen(f"http://127.0.0.1:{port}/x.json?ns={namespace}").read()
    browser.find_element(By.ID, "coverage-refresh").click()
    WebDriverWait(browser, 5).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#coverage span.false"))
    assert browser.find_element(By.ID, "coverage-summary").text == "2 of 2 rules evaluated since they were set"
    marked = [(span.text, span.get_attribute("class"), span.get_attribute("title")) for span in browser.find_elements(By.CSS_SELECTOR, "#coverage span")]
    assert ("true", "true", "true: true ×1") in marked, marked
    assert any(kind == "false" and title == "auth != null: false ×1" for _, kind, title in marked), marked


def test_the_monitor_tab_shows_operations_as_they_happen(server, app, browser):
    from firebase_admin import db
    top = "viewer-" + uuid.uuid4().hex[:8]
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite#monitor")
    WebDriverWait(browser, 5).until(lambda b: b.find_element(By.ID, "monitor-count").get_attribute("data-state") == "open")
    db.reference(f"/{top}/m", app=app).set({"n": 1})
    WebDriverWait(browser, 5).until(lambda b: any(f"/{top}/m" in tr.text for tr in b.find_elements(By.CSS_SELECTOR, "#monitor tbody tr")))
    cells = [td.text for td in next(tr for tr in browser.find_elements(By.CSS_SELECTOR, "#monitor tbody tr") if f"/{top}/m" in tr.text).find_elements(By.TAG_NAME, "td")]
    assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d\d\d", cells[0]) and cells[1] in ("rest-write", "realtime-write") and cells[2] == f"/{top}/m", cells
    assert cells[4] == "8"  # firebase-admin's body: {"n": 1}
    assert re.fullmatch(r"\d+ operations?(; the last \d+ shown)?", browser.find_element(By.ID, "monitor-count").text)


def test_a_million_children_open_with_the_page_bounded_by_what_is_shown(binary):
    """A node of 1,000,000 children: the root shows it by its count, opened it holds the 50 it
    shows (100 after more), and the tab's memory stays near that of an empty namespace's page;
    how soon they show is a benchmark (Benchmarks/run), not a test."""
    data = tempfile.mkdtemp(prefix="rtdb-million-")
    source = os.path.join(data, "million.json")
    with open(source, "w") as f:
        f.write("{" + ",".join(f'"k{i:07d}":{i}' for i in range(1000000)) + "}")
    subprocess.run([binary, "--data", os.path.join(data, "big"), "import", "/users", source, "--quiet"], check=True, timeout=300)
    process = subprocess.Popen([binary, "serve", "--port", "0", "--data", data],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--enable-precise-memory-info"]:
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+) ", process.stdout.readline()).group(1))
        heap = lambda: browser.execute_script("return performance.memory.usedJSHeapSize")
        browser.get(f"http://127.0.0.1:{port}/?ns=empty")
        WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "status").text == "live")
        empty = heap()
        browser.get(f"http://127.0.0.1:{port}/?ns=big")
        assert shown(browser, "/users") == "▸users {1000000 children}"
        row(browser, "/users").find_element(By.CLASS_NAME, "toggle").click()
        rows = lambda b: b.find_elements(By.CSS_SELECTOR, 'li[data-path="/users"] > ul > li')
        WebDriverWait(browser, 60).until(lambda b: len(rows(b)) == 50)
        assert [r.get_attribute("data-path") for r in rows(browser)[:2]] == ["/users/k0000000", "/users/k0000001"]
        assert text(browser, "/users/k0000049") == "k0000049 49"
        assert heap() < empty + (8 << 20), (heap(), empty)
        browser.find_element(By.CSS_SELECTOR, 'li[data-path="/users"] > button.more').click()
        WebDriverWait(browser, 60).until(lambda b: len(rows(b)) == 100)
        assert heap() < empty + (8 << 20), (heap(), empty)
    finally:
        browser.quit()
        process.terminate()
        process.wait(timeout=30)


# Runs the page's own import on a file whose text `make` (a function of the notes) makes in
# the page: (result, progress said last).
IMPORT_IN_PAGE = """
const [name, make, path, merge, done] = arguments;
const file = new File([eval(make)(window.bigNotes)], name);
let said = "";
Rtdb.importer.run(file, path, merge, (words) => { said = words; }).then((result) => done([result, said]));
"""

# A file of `count` notes over `count` lines (its first line "{"), each with text past ASCII.
BIG_NOTES = """
const lines = [];
for (let i = 0; i < arguments[0]; i++) lines.push('"k' + String(i).padStart(7, "0") + '": {"n": ' + i + ', "s": "ééé"}');
window.bigNotes = lines;
"""


def test_an_import_is_checked_whole_before_anything_is_written(server, app, browser):
    """The importer on files over 8 MB (cut into parts) and under: a mistake anywhere is said at
    its line and column, counted in characters, and nothing is written; a byte-order mark is
    read past; a list goes under its indexes; a merge takes an object."""
    from firebase_admin import db
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({"kept": 1})
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite")
    row(browser, "/" + top)
    browser.set_script_timeout(120)
    browser.execute_script(BIG_NOTES, 250000)

    def run(name, text_js, merge=False):
        return browser.execute_async_script(IMPORT_IN_PAGE, name, text_js, [top], merge)

    # A mistake in a later part, after characters past ASCII on its line.
    line = '"k0100000": {"n": 100000, "s": "ééé",}'
    result, _ = run("late.json", """(lines) => { const copy = lines.slice(); copy[100000] = copy[100000].replace('"}', '",}'); return "{\\n" + copy.join(",\\n") + "\\n}\\n"; }""")
    assert result == {"error": f"late.json: line 100002, column {line.index(',}') + 2}: expected a key in double quotes; nothing was written"}, result
    result, _ = run("bracket.json", """(lines) => "{\\n" + lines.join(",\\n") + "\\n]\\n" """)
    assert result == {"error": "bracket.json: line 250002, column 1: expected '}' to close the object; nothing was written"}, result
    result, _ = run("short.json", """(lines) => "{\\n" + lines.join(",\\n") """)
    assert result == {"error": "short.json: line 250001, column 38: the file ends before its value is closed; nothing was written"}, result
    result, _ = run("list.json", """(lines) => "[" + lines.map((l) => l.slice(12)).join(",") + "]" """, merge=True)
    assert result == {"error": "list.json: a merge takes a JSON object: its children replace those of the same names; nothing was written"}, result
    assert db.reference("/" + top, app=app).get() == {"kept": 1}
    # A byte-order mark, over 8 MB and under.
    result, said = run("bom.json", """(lines) => "\\ufeff{\\n" + lines.join(",\\n") + "\\n}\\n" """)
    assert re.fullmatch(r"imported bom\.json \(\d+\.\d MB\) into /viewer-\w+ in \d writes, \d+(\.\d)? s", result.get("summary", "")), result
    assert said.startswith("writing ")
    assert db.reference(f"/{top}/k0249999", app=app).get() == {"n": 249999, "s": "ééé"}
    assert db.reference(f"/{top}/kept", app=app).get() is None
    result, _ = run("small.json", """() => "\\ufeff{\\"a\\": [1, 2]}" """)
    assert "summary" in result, result
    assert db.reference("/" + top, app=app).get() == {"a": [1, 2]}
    # A list over 8 MB: its items under their indexes.
    result, _ = run("list.json", """(lines) => "[" + lines.map((l) => l.slice(12)).join(",") + "]" """)
    assert "summary" in result, result
    assert db.reference(f"/{top}/249999", app=app).get() == {"n": 249999, "s": "ééé"}
    assert len(db.reference("/" + top, app=app).get(shallow=True)) == 250000


def test_a_leaf_edit_keeps_its_priority_and_refuses_a_stale_value(server, app, browser):
    from firebase_admin import db
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.common.action_chains import ActionChains
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({"p": {".value": 1, ".priority": 3}})
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite")
    row(browser, "/" + top).find_element(By.CLASS_NAME, "toggle").click()
    ActionChains(browser).double_click(row(browser, f"/{top}/p").find_element(By.CLASS_NAME, "number")).perform()
    field = WebDriverWait(browser, 5).until(lambda b: row(b, f"/{top}/p").find_element(By.CSS_SELECTOR, "input.edit"))
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("2", Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/p") == "p 2")
    assert json.loads(rest(server, f"/{top}/p.json?format=export")[0]) == {".value": 2, ".priority": 3}
    # Another client writes while the field is open: the edit is refused, nothing overwritten.
    ActionChains(browser).double_click(row(browser, f"/{top}/p").find_element(By.CLASS_NAME, "number")).perform()
    field = WebDriverWait(browser, 5).until(lambda b: row(b, f"/{top}/p").find_element(By.CSS_SELECTOR, "input.edit"))
    db.reference(f"/{top}/p", app=app).set(7)
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("9", Keys.ENTER)
    problem = row(browser, f"/{top}/p").find_element(By.CLASS_NAME, "problem")
    WebDriverWait(browser, 5).until(lambda b: problem.text)
    assert problem.text == "it changed since it was read (another client wrote it): Escape, and edit what is there now"
    assert db.reference(f"/{top}/p", app=app).get() == 7


def test_an_open_node_listens_to_its_children_cut_to_their_counts(server, app, browser):
    """A child with thousands of children below it is shown by its count, not read; a write deep
    below a closed child flashes it; "more" shows only when there are more."""
    from firebase_admin import db
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({"big": {f"c{i:05d}": {"deep": {"n": i}} for i in range(5000)},
                                          "fifty": {f"k{i:02d}": i for i in range(50)}})
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite")
    row(browser, "/" + top).find_element(By.CLASS_NAME, "toggle").click()
    assert shown(browser, f"/{top}/big") == "▸big {5000 children}"
    browser.execute_script(RECORD_FLASHES)
    db.reference(f"/{top}/big/c04999/deep/n", app=app).set(-1)
    WebDriverWait(browser, 5).until(lambda b: f"/{top}/big changed" in flashes(b))
    assert text(browser, f"/{top}/big") == "▸big {5000 children}"
    row(browser, f"/{top}/fifty").find_element(By.CLASS_NAME, "toggle").click()
    row(browser, f"/{top}/fifty/k49")
    assert not browser.find_elements(By.CSS_SELECTOR, f'li[data-path="/{top}/fifty"] > button.more')
    db.reference(f"/{top}/fifty/k50", app=app).set(50)
    WebDriverWait(browser, 5).until(lambda b: b.find_elements(By.CSS_SELECTOR, f'li[data-path="/{top}/fifty"] > button.more'))
    assert text(browser, f"/{top}/fifty/k50") == ""
    # An open node another client makes a leaf closes to show it.
    db.reference(f"/{top}/fifty", app=app).set(5)
    WebDriverWait(browser, 5).until(lambda b: text(b, f"/{top}/fifty") == "fifty 5")
    assert not browser.find_elements(By.CSS_SELECTOR, f'li[data-path="/{top}/fifty/k00"]')
