#!/usr/bin/env python3
"""The data viewer on a namespace of 1,000,000 children, in headless Chromium: how long after
navigation its first 50 rows are painted, and the tab's JavaScript heap then, beside the same
page on an empty namespace (its status live) measured in the same run: the ratio is what the
million children cost. The goal: under 500 ms, the heap bounded by what is shown.

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

# Resolves at the first frame after the root shows `rows` children (the empty page: once live).
PAINTED = """
const rows = arguments[0], done = arguments[arguments.length - 1];
const check = () => {
  const shown = document.querySelectorAll('#root > ul > li').length;
  const live = document.getElementById('status').textContent === 'live';
  if (rows ? shown >= rows : live) {
    requestAnimationFrame(() => done([performance.now(), performance.memory.usedJSHeapSize, shown]));
  } else {
    setTimeout(check, 2);
  }
};
check();
"""


def main():
    rtdb = sys.argv[1]
    children = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    data = tempfile.mkdtemp(prefix="rtdb-viewer-bench-")
    source = os.path.join(data, "children.json")
    with open(source, "w") as f:
        f.write("{" + ",".join(f'"k{i:07d}":{i}' for i in range(children)) + "}")
    subprocess.run([rtdb, "--data", os.path.join(data, "big"), "import", "/", source, "--quiet"], check=True)
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
        figures = {}
        # The first opening of each namespace reads it from disk: timed apart from the rest.
        for namespace, rows in [("big", 50), ("empty", 0)]:
            runs = []
            for _ in range(8):
                browser.get(f"http://127.0.0.1:{port}/?ns={namespace}")
                runs.append(browser.execute_async_script(PAINTED, rows))
            figures[namespace] = runs
        big, empty = figures["big"], figures["empty"]
        median = lambda runs, i: statistics.median(run[i] for run in runs[1:])
        print(f"viewer: first 50 of {children:,} children painted {median(big, 0):.0f} ms after navigation "
              f"(median of {len(big) - 1}; the namespace's first opening {big[0][0]:.0f} ms; goal under 500 ms), "
              f"tab heap {median(big, 1) / 1048576:.1f} MB; the page on an empty namespace: live at {median(empty, 0):.0f} ms, "
              f"heap {median(empty, 1) / 1048576:.1f} MB (ratio {median(big, 0) / max(1, median(empty, 0)):.2f})")
    finally:
        browser.quit()
        server.terminate()
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
