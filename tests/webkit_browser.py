"""WebKit, the engine of Safari on the iPad, driven through Debian's WebKitGTK WebDriver (`WebKitWebDriver`,
apt `webkit2gtk-driver`) with Selenium, in a throwaway X server (apt `xvfb`) on a free display.

The driver starts WebKitGTK's MiniBrowser in automation mode. See docs/webkit.md for what this build does
and does not do (its automation sessions are ephemeral, like Safari's Private Browsing).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
import warnings
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.support.wait import WebDriverWait
from selenium.webdriver.webkitgtk.options import Options
from selenium.webdriver.webkitgtk.service import Service

from factories import PASSWORD

DRIVER = shutil.which("WebKitWebDriver")
XVFB = shutil.which("Xvfb")
MINIBROWSER = next(iter(sorted(Path("/usr/lib").glob("*/webkit2gtk-4.*/MiniBrowser"))), None)


def _free_display() -> int:
    """A display number no X server holds (neither its lock file nor its socket exists)."""
    for number in range(90, 200):
        if not Path(f"/tmp/.X{number}-lock").exists() and not Path(f"/tmp/.X11-unix/X{number}").exists():
            return number
    raise RuntimeError("no free X display between :90 and :199")


@contextlib.contextmanager
def xvfb():
    """An Xvfb server of a tablet's size on a free display; its DISPLAY, stopped afterwards."""
    if XVFB is None:
        raise RuntimeError("Xvfb is not installed: `make test` installs it (apt xvfb)")
    for _ in range(5):  # another process may take the display between the check and the start
        number = _free_display()
        process = subprocess.Popen([XVFB, f":{number}", "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if Path(f"/tmp/.X11-unix/X{number}").exists() or process.poll() is not None:
                break
            time.sleep(0.02)
        if process.poll() is None:
            break
    else:
        raise RuntimeError("Xvfb did not start on any free display")
    try:
        yield f":{number}"
    finally:
        process.terminate()
        process.wait(timeout=5)


@contextlib.contextmanager
def webkit(display: str, log_path: Path):
    """A WebKitGTK browser under WebDriver on `display` (the driver's log goes to `log_path`)."""
    options = Options()
    if MINIBROWSER is not None:
        options.binary_location = str(MINIBROWSER)
    options.add_argument("--automation")
    service = Service(executable_path=DRIVER, log_output=str(log_path), env={**os.environ, "DISPLAY": display})
    with warnings.catch_warnings():
        # Selenium's own local drivers pass the address the way it deprecated (seen in 4.51).
        warnings.filterwarnings("ignore", "setting remote_server_addr", DeprecationWarning)
        driver = webdriver.WebKitGTK(options=options, service=service)
    driver.set_window_size(1024, 768)
    try:
        yield driver
    finally:
        driver.quit()


def wait_until(driver, condition, timeout_s: float = 30, message: str = ""):
    """Poll `condition(driver)` (a script or a find) until it is truthy; its value."""
    try:
        return WebDriverWait(driver, timeout_s, poll_frequency=0.1).until(condition, message)
    except TimeoutException as error:
        raise AssertionError(f"{message} (page: {driver.current_url})") from error


def text_of(driver, selector: str) -> str:
    return driver.execute_script("var el = document.querySelector(arguments[0]); return el ? el.innerText : null;",
                                 selector) or ""


def wait_for_text(driver, selector: str, text: str, timeout_s: float = 30) -> None:
    try:
        wait_until(driver, lambda d: text in text_of(d, selector), timeout_s, f"{selector} never said {text!r}")
    except AssertionError as error:
        raise AssertionError(f"{error}; it said {text_of(driver, selector)[:300]!r}") from None


def sign_in_controlled(driver, base_url: str, user, password: str = PASSWORD) -> None:
    """Log in through the form and wait until the service worker controls the page."""
    driver.get(f"{base_url}/login")
    driver.find_element("css selector", "input[name=email]").send_keys(user.email)
    driver.find_element("css selector", "input[name=password]").send_keys(password)
    driver.find_element("css selector", "button[type=submit]").click()
    wait_until(driver, lambda d: "/login" not in d.current_url, message="the login form did not let us in")
    wait_until(driver, lambda d: d.execute_script("return !!navigator.serviceWorker.controller"),
               message="the service worker never took control of the page")


def device_store(driver, name: str = "posts") -> list[dict]:
    """The records of this device's IndexedDB store (static/formstore.js), without their files."""
    driver.set_script_timeout(30)
    answer = driver.execute_async_script("""
        var done = arguments[arguments.length - 1];
        (arguments[0] === "posts" ? FormStore : DeviceStore(arguments[0])).all().then(function (items) {
          done({items: items.map(function (p) { return {id: p.id, url: p.url, state: p.state}; })});
        }, function (error) { done({error: String(error)}); });""", name)
    if "error" in answer:
        raise AssertionError(f"IndexedDB store {name!r} could not be read: {answer['error']}")
    return answer["items"]
