"""A real headless Chromium for the console tests: Debian's `chromium` and `chromium-driver` packages driven
by Selenium's Python client. Nothing is downloaded at test time: both binaries are given by path. The
Makefile's `browser` target, which `make unit` (and so `make test`) runs first, installs the two packages with
apt when they are missing (as root; otherwise it says what to install)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / ".local" / "screenshots"


def binaries() -> tuple[str, str]:
    browser = shutil.which("chromium") or "/usr/bin/chromium"
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not (Path(browser).exists() and Path(driver).exists()):
        raise RuntimeError(
            "Debian's chromium and chromium-driver packages are needed: `make browser` (run by "
            "`make unit`) installs them, or: sudo apt-get install chromium chromium-driver"
        )
    return browser, driver


def start_browser() -> webdriver.Chrome:
    browser, driver = binaries()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1000",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--metrics-recording-only",
        "--no-proxy-server",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


def wait_until(check: Callable[[], Any], timeout: float = 15, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except Exception as error:  # the page is still rendering; retry until the deadline
            last = error
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}" + (f": {last}" if last else ""))


def screenshot(driver: webdriver.Chrome, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    print(f"screenshot: {path}")
    return path


def set_width(driver: webdriver.Chrome, width: int, height: int = 900) -> None:
    """The page laid out as on a screen `width` CSS pixels wide (a phone below 600: a mobile viewport)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


def reset_width(driver: webdriver.Chrome) -> None:
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def sideways_overflow(driver: webdriver.Chrome) -> int:
    """How many pixels the page is wider than the window (0: it does not scroll sideways)."""
    wide, inner = driver.execute_script(
        "return [Math.max(document.documentElement.scrollWidth, document.body.scrollWidth), window.innerWidth]"
    )
    return max(0, int(wide) - int(inner))


def full_page_screenshot(driver: webdriver.Chrome, name: str, width: int) -> Path:
    """The whole page, top to bottom, at `width` (a window as tall as the page, then the usual height)."""
    import base64

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    set_width(driver, width, min(max(height, 600), 12000))
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    path.write_bytes(base64.b64decode(shot["data"]))
    set_width(driver, width)
    print(f"screenshot: {path}")
    return path
