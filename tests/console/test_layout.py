"""The console in a real headless Chromium at 1280 and 390 CSS pixels wide, against the real function_app.py
under the local host: no page scrolls sideways (the collections, a collection's jobs, a job whose history
holds a long message, the job form), a long message is folded behind an expander, times are in the job's
zone with UTC beside, a collection shows the limits the API enforces (never "no limit"), and a disabled job
says its counters are not reported. Full-page screenshots go to .local/screenshots (paths printed)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from selenium.webdriver.common.by import By

from .browser import full_page_screenshot, reset_width, set_width, sideways_overflow, wait_until
from .conftest import V

SUB, RG = "layout-sub", "layout-rg"
BASE = f"subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections"
WIDTHS = (1280, 390)


def _put(url: str, body: dict) -> None:
    answer = requests.put(url, params=V, json=body, timeout=10)
    assert answer.status_code in (200, 201), answer.text


@pytest.fixture
def sized(browser) -> Iterator:
    yield browser
    reset_width(browser)


@dataclass
class Target:
    url: str
    body: bytes = b"ok"


@pytest.fixture(scope="module")
def http_target_module() -> Iterator[Target]:
    """A real local HTTP server for the module's jobs, answering 200 with `body`."""
    target = Target("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(target.body)))
            self.end_headers()
            self.wfile.write(target.body)

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    target.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield target
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def site(host_url: str, http_target_module: Target) -> str:
    _put(f"{host_url}/{BASE}/wide", {"location": "westeurope", "properties": {"sku": {"name": "Standard"}}})
    _put(f"{host_url}/{BASE}/small", {"location": "westeurope", "properties": {"sku": {"name": "Free"}}})
    # The target answers with a long, unbroken text: the history message quotes the whole response.
    http_target_module.body = ("x" * 600 + " " + "long-response-" * 150).encode()
    _put(
        f"{host_url}/{BASE}/wide/jobs/chatty",
        {
            "properties": {
                "recurrence": {
                    "frequency": "Day",
                    "schedule": {"hours": [9], "minutes": [30]},
                    "timeZone": "America/New_York",
                },
                "startTime": "2026-01-01T00:00:00Z",
                "action": {
                    "type": "Http",
                    "retryPolicy": {"retryType": "None"},
                    "request": {
                        "uri": f"{http_target_module.url}/a/very/long/path/" + "segment/" * 30,
                        "method": "POST",
                        "body": "hello",
                    },
                },
            }
        },
    )
    assert requests.post(f"{host_url}/{BASE}/wide/jobs/chatty/run", params=V, timeout=10).status_code == 200
    wait_until(
        lambda: requests.get(f"{host_url}/{BASE}/wide/jobs/chatty/history", params=V, timeout=10).json()["value"],
        timeout=60,
        what="the run's history entry",
    )
    _put(
        f"{host_url}/{BASE}/wide/jobs/resting",
        {
            "properties": {
                "state": "Disabled",
                "recurrence": {"frequency": "Hour"},
                "action": {"type": "Http", "request": {"uri": f"{http_target_module.url}/", "method": "GET"}},
            }
        },
    )
    return host_url


def _main(browser) -> str:
    return browser.find_element(By.TAG_NAME, "main").text


@pytest.mark.parametrize("width", WIDTHS)
def test_a_job_with_a_long_history_message_does_not_scroll_sideways(site: str, sized, width: int) -> None:
    set_width(sized, width)
    sized.get(f"{site}/console/{BASE}/wide/jobs/chatty")
    folded = wait_until(
        lambda: sized.find_element(By.CSS_SELECTOR, "#history-table details.message"), what="the folded message"
    )
    assert sideways_overflow(sized) == 0
    summary = folded.find_element(By.TAG_NAME, "summary")
    assert summary.text.startswith("Http Action - Response from host '127.0.0.1'") and summary.text.endswith("…")
    # Times in the job's zone with UTC beside (09:30 in New York is 14:30 UTC in winter, 13:30 in summer).
    first = sized.find_elements(By.CSS_SELECTOR, "#occurrences li")[0].text
    assert " 09:30:00 America/New_York (" in first and first.endswith(("14:30:00 UTC)", "13:30:00 UTC)"))
    summary.click()  # opened, the whole message wraps inside the page
    wait_until(lambda: folded.get_attribute("open") is not None, what="the opened message")
    assert "long-response-long-response" in folded.find_element(By.CSS_SELECTOR, "pre.message-full").text
    assert sideways_overflow(sized) == 0
    full_page_screenshot(sized, f"console-job-long-message-{width}", width)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_job_form_does_not_scroll_sideways(site: str, sized, width: int) -> None:
    set_width(sized, width)
    sized.get(f"{site}/console/{BASE}/wide/jobs/chatty?action=edit")
    wait_until(lambda: sized.find_element(By.ID, "preview-list"), what="the live preview")
    assert sized.find_element(By.ID, "action-uri").get_attribute("value").endswith("segment/")
    assert sideways_overflow(sized) == 0
    full_page_screenshot(sized, f"console-job-form-{width}", width)
    sized.find_element(By.ID, "tab-json").click()
    wait_until(lambda: sized.find_element(By.ID, "job-json").is_displayed(), what="the JSON tab")
    assert sideways_overflow(sized) == 0


@pytest.mark.parametrize("width", WIDTHS)
def test_lists_show_effective_limits_and_disabled_counters_without_scrolling_sideways(
    site: str, sized, width: int
) -> None:
    set_width(sized, width)
    sized.get(f"{site}/console?subscription={SUB}")
    wait_until(lambda: "small" in _main(sized) and "wide" in _main(sized), what="the collections")
    rows = {
        r.find_element(By.CSS_SELECTOR, "th a").text: r.find_elements(By.TAG_NAME, "td")
        for r in sized.find_elements(By.CSS_SELECTOR, "table tbody tr")
    }
    assert rows["small"][4].text.endswith("0 / 5") and rows["wide"][4].text.endswith("2 / 50")  # never "no limit"
    assert sideways_overflow(sized) == 0
    full_page_screenshot(sized, f"console-collections-{width}", width)

    sized.get(f"{site}/console/{BASE}/small")
    wait_until(lambda: sized.find_element(By.ID, "max-jobs").text, what="the Free collection's limits")
    assert sized.find_element(By.ID, "max-jobs").text == "0 of at most 5 (the Free plan)"
    assert sized.find_element(By.ID, "min-interval").text == "at most once every 1 hour"

    sized.get(f"{site}/console/{BASE}/wide")
    resting = wait_until(lambda: sized.find_element(By.XPATH, "//tr[th//a[text()='resting']]"), what="the jobs")
    assert [c.text.split(": ")[-1] for c in resting.find_elements(By.TAG_NAME, "td")][-3:] == ["—", "—", "—"]
    assert "The API returns no status for a disabled job" in _main(sized)
    assert sideways_overflow(sized) == 0
    full_page_screenshot(sized, f"console-jobs-{width}", width)

    sized.get(f"{site}/console/{BASE}/wide/jobs/resting")
    counters = wait_until(lambda: sized.find_element(By.ID, "counters"), what="the disabled job's page")
    assert counters.text.startswith("Not reported while the job is disabled")
    assert sideways_overflow(sized) == 0
