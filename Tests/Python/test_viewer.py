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


def row(browser, path, timeout=5):
    """The tree row of `path` once it is shown."""
    return WebDriverWait(browser, timeout).until(
        lambda b: b.find_element(By.CSS_SELECTOR, f'li[data-path="{path}"] > .row'))


def test_a_node_opened_follows_changes_highlighted(server, app, browser):
    from firebase_admin import db
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({"a": 1, "b": {"c": "x"}})
    origin = f"http://127.0.0.1:{server['port']}"
    browser.get(origin + "/?ns=admin-suite")
    row(browser, "/" + top).find_element(By.CLASS_NAME, "toggle").click()
    a = row(browser, f"/{top}/a")
    assert a.text == "a 1"
    assert row(browser, f"/{top}/b").text == "▸b {1 child}"
    # Another client's writes show within a second, highlighted.
    db.reference(f"/{top}/a", app=app).set(2)
    WebDriverWait(browser, 1).until(lambda b: row(b, f"/{top}/a").text == "a 2")
    assert "changed" in row(browser, f"/{top}/a").get_attribute("class")
    db.reference(f"/{top}/d", app=app).set(True)
    WebDriverWait(browser, 1).until(lambda b: "added" in row(b, f"/{top}/d").get_attribute("class"))
    assert row(browser, f"/{top}/d").text == "d true"
    db.reference(f"/{top}/a", app=app).delete()
    WebDriverWait(browser, 1).until(lambda b: "removed" in row(b, f"/{top}/a").get_attribute("class"))
    # A child opened in turn.
    row(browser, f"/{top}/b").find_element(By.CLASS_NAME, "toggle").click()
    assert row(browser, f"/{top}/b/c").text == 'c "x"'
    folder = os.environ.get("RTDB_ARTIFACTS", tempfile.gettempdir())
    os.makedirs(folder, exist_ok=True)
    browser.save_screenshot(os.path.join(folder, "viewer.png"))
    # Everything the page loaded came from this server, and nothing was refused.
    resources = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert resources and all(url.startswith(origin + "/") for url in resources), resources
    problems = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert problems == []


def test_more_children_a_page_at_a_time(server, app, browser):
    from firebase_admin import db
    top = "viewer-" + uuid.uuid4().hex[:8]
    db.reference("/" + top, app=app).set({f"k{i:03d}": i for i in range(120)})
    browser.get(f"http://127.0.0.1:{server['port']}/?ns=admin-suite")
    row(browser, "/" + top).find_element(By.CLASS_NAME, "toggle").click()
    row(browser, f"/{top}/k049")
    shown = lambda b: len(b.find_elements(By.CSS_SELECTOR, f'li[data-path^="/{top}/"]'))
    assert shown(browser) == 50
    browser.find_element(By.CSS_SELECTOR, f'li[data-path="/{top}"] > button.more').click()
    WebDriverWait(browser, 5).until(lambda b: shown(b) == 100)


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
