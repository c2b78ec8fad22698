#!/usr/bin/env python3
"""The data viewer on a node of 1,000,000 children (/users), in headless Chromium: how long
after navigation the root is painted (users shown by its count), how long after a click on
users its first 50 children are, and the tab's JavaScript heap then; beside the same page on
an empty namespace (its status live) measured in the same run. The ratio is of the times: what
the million children cost the first paint. The goal: under 500 ms, the heap bounded by what is
shown (a heap read after a navigation is noisy: it says megabytes, not bytes).

Usage: viewer.py RTDB [CHILDREN]
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

# Resolves at the first frame after `selector` matches `rows` elements (none: once live), with
# the time since navigation; with `click`, clicks it first and times from the click.
PAINTED = """
const [selector, rows, click, done] = arguments;
const started = click ? performance.now() : 0;
if (click) document.querySelector(click).click();
const check = () => {
  const shown = document.querySelectorAll(selector).length;
  const live = document.getElementById('status').textContent === 'live';
  if (rows ? shown >= rows : live) {
    requestAnimationFrame(() => done([performance.now() - started, performance.memory.usedJSHeapSize, shown]));
  } else {
    setTimeout(check, 2);
  }
};
check();
"""
ROOT_ROWS = '#root > ul > li'
USERS_ROWS = 'li[data-path="/users"] > ul > li'
USERS_TOGGLE = 'li[data-path="/users"] > .row > .toggle'



def main():
    rtdb = sys.argv[1]
    children = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    data = tempfile.mkdtemp(prefix="rtdb-viewer-bench-")
    source = os.path.join(data, "children.json")
    with open(source, "w") as f:
        f.write("{" + ",".join(f'"k{i:07d}":{i}' for i in range(children)) + "}")
    subprocess.run([rtdb, "--data", os.path.join(data, "big"), "import", "/users", source, "--quiet"], check=True)
    os.remove(source)
    server = subprocess.Popen([rtdb, "serve", "--port", "0", "--data", data], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--enable-precise-memory-info"]:
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    browser.set_script_timeout(120)
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+) ", server.stdout.readline()).group(1))
        big, opened, empty = [], [], []
        # The first opening of each namespace reads it from disk: timed apart from the rest.
        for _ in range(8):
            browser.get(f"http://127.0.0.1:{port}/?ns=big")
            big.append(browser.execute_async_script(PAINTED, ROOT_ROWS, 1, None))
            opened.append(browser.execute_async_script(PAINTED, USERS_ROWS, 50, USERS_TOGGLE))
        for _ in range(8):
            browser.get(f"http://127.0.0.1:{port}/?ns=empty")
            empty.append(browser.execute_async_script(PAINTED, ROOT_ROWS, 0, None))
        median = lambda runs, i: statistics.median(run[i] for run in runs[1:])
        print(f"viewer: / with users of {children:,} children painted {median(big, 0):.0f} ms after navigation "
              f"(median of {len(big) - 1}; the namespace's first opening {big[0][0]:.0f} ms; goal under 500 ms), "
              f"users' first 50 painted {median(opened, 0):.0f} ms after its click, tab heap then {median(opened, 1) / 1048576:.1f} MB; "
              f"the page on an empty namespace: live at {median(empty, 0):.0f} ms, heap {median(empty, 1) / 1048576:.1f} MB "
              f"(ratio of first paints {median(big, 0) / max(1, median(empty, 0)):.2f})")
    finally:
        browser.quit()
        server.terminate()
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
