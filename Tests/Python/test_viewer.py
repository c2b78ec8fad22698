"""The data viewer `rtdb serve` shows at `/`, driven in headless Chromium as a person uses it:
a node opened, a value another client writes shown highlighted, nothing loaded from elsewhere."""
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
    """The row's text now ("" when it is not shown), without the + and × a pointer over it shows."""
    found = browser.find_elements(By.CSS_SELECTOR, f'li[data-path="{path}"] > .row')
    return re.sub(r"[+×]+$", "", found[0].text) if found else ""


def shown(browser, path):
    """The row's text once it is shown."""
    row(browser, path)
    return text(browser, path)


# Every highlight the page makes, in order, as "PATH KIND": a flash lasts a second or two,
# so the test reads the page's record of them rather than catching each one.
RECORD_FLASHES = """
window.flashes = [];
new MutationObserver((changes) => {
  for (const change of changes) {
    const row = change.target;
    if (!row.classList || !row.classList.contains("row")) continue;
    const before = (change.oldValue || "").split(" ");
    for (const kind of ["added", "changed", "removed"]) {
      const entry = row.parentElement.dataset.path + " " + kind;
      // One flash makes two records (its class taken off, then put on), read together.
      if (row.classList.contains(kind) && !before.includes(kind) && window.flashes[window.flashes.length - 1] !== entry) window.flashes.push(entry);
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
    field = row(browser, f"/{top}/a").find_element(By.CSS_SELECTOR, "input.edit")
    assert field.get_attribute("value") == "1"
    field.send_keys(Keys.END, " 2", Keys.ENTER)
    problem = row(browser, f"/{top}/a").find_element(By.CLASS_NAME, "problem")
    assert "JSON" in problem.text, problem.text
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
    form = browser.find_element(By.CSS_SELECTOR, f'li[data-path="/{top}"] > .adding')
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
    form = browser.find_element(By.CSS_SELECTOR, f'li[data-path="/{top}"] > .adding')
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
