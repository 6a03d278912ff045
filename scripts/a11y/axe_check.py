#!/usr/bin/env python3
"""Accessibility check of `cairn ui`: loads each view of the page at URL in headless Chromium
(through chromedriver and Selenium), runs axe-core in it, and fails on any serious or
critical violation.

    python3 scripts/a11y/axe_check.py URL

URL is the one `cairn ui` prints (with its token). The store behind it should hold an agent's
turns, so every view has something to show: the UI tests (crates/cairn/tests/ui) run this
script over the session they record. axe-core comes inside the axe-selenium-python package
(scripts/deps/axe.sh installs it), so nothing is fetched from the network.

Views checked: the timeline, a moment, a diff with a file open (split, then unified), the
store figures, the shortcut help and the rewind confirmation. Prints one line per view, and each violation
with the elements it names; exits 1 when any is serious or critical, 2 when the page could
not be driven.
"""

import shutil
import sys
import time

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

BLOCKING = {"serious", "critical"}


def browser():
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,900"):
        options.add_argument(arg)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:
        options.binary_location = chromium
    # The chromedriver on PATH: Selenium must not look for (and download) one of its own.
    service = Service(executable_path=shutil.which("chromedriver"))
    return webdriver.Chrome(options=options, service=service)


def wait(driver, what, script, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if driver.execute_script(script):
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def check(driver, view):
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    blocking = [v for v in results["violations"] if v.get("impact") in BLOCKING]
    others = [v for v in results["violations"] if v.get("impact") not in BLOCKING]
    print(f"{view}: {len(blocking)} serious or critical, {len(others)} minor or moderate")
    for v in results["violations"]:
        targets = ", ".join(" ".join(n["target"]) for n in v["nodes"][:5])
        print(f"  {v.get('impact')}: {v['id']}: {v['help']} ({targets})")
    return len(blocking)


def main(url):
    driver = browser()
    failures = 0
    try:
        driver.get(url)
        wait(driver, "the timeline", "return document.querySelectorAll('.entry').length >= 2")
        failures += check(driver, "timeline")

        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys("?")
        wait(driver, "the shortcut help", "return document.querySelector('#help').open")
        failures += check(driver, "shortcut help")
        driver.switch_to.active_element.send_keys(Keys.ESCAPE)
        wait(driver, "the help to close", "return !document.querySelector('#help').open")

        # The oldest prompt that has a row below it: a moment with a rewind button.
        driver.execute_script(
            "const rows = [...document.querySelectorAll('.entry:not([hidden])')];"
            "const row = rows.find((r, i) => i > 0 && /turn \\d+: /.test(r.querySelector('.title').innerText)) || rows[0];"
            "row.focus(); row.click();")
        wait(driver, "a moment", "return document.querySelector('#pane .actions')")
        failures += check(driver, "moment")

        if driver.execute_script("return !!document.querySelector('#rewind')"):
            driver.find_element(By.ID, "rewind").click()
            wait(driver, "the rewind confirmation",
                 "return document.querySelector('#confirm').open && document.querySelector('#confirm-body h3, #confirm-body p.muted')")
            failures += check(driver, "rewind confirmation")
            driver.switch_to.active_element.send_keys(Keys.ESCAPE)
            wait(driver, "the confirmation to close", "return !document.querySelector('#confirm').open")

        # The oldest row marked A, the newest B, compared: a diff with files in it.
        driver.execute_script("const rows = document.querySelectorAll('.entry:not([hidden])'); rows[rows.length - 1].focus();")
        driver.switch_to.active_element.send_keys("a")
        driver.execute_script("document.querySelector('.entry').focus();")
        driver.switch_to.active_element.send_keys("b")
        driver.switch_to.active_element.send_keys("c")
        wait(driver, "a diff", "return document.querySelector('#diff-title')")
        if driver.execute_script("return !!document.querySelector('.tree .file')"):
            # A text file when there is one: its lines, not an image, are what the views differ in.
            driver.execute_script(
                "const files = [...document.querySelectorAll('.tree .file')];"
                "(files.find(f => !/\\.(png|jpe?g|gif|webp)$/.test(f.dataset.path)) || files[0]).click()")
            wait(driver, "a file", "return document.querySelector('#file-title, .file-view p:not(.muted)')")
        failures += check(driver, "diff")
        if driver.execute_script("return !!document.querySelector('.diff-view-switch .view-unified')"):
            driver.find_element(By.CSS_SELECTOR, ".diff-view-switch .view-unified").click()
            wait(driver, "the unified diff", "return document.querySelector('table.uni')")
            failures += check(driver, "unified diff")

        driver.find_element(By.ID, "show-stats").click()
        wait(driver, "the store figures", "return document.querySelector('#store-figures')")
        failures += check(driver, "store")
    except Exception as e:  # noqa: BLE001 - one line for whatever stopped the drive
        print(f"axe_check: could not drive the page: {e}", file=sys.stderr)
        return 2
    finally:
        driver.quit()
    if failures:
        print(f"axe_check: {failures} serious or critical violations", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
