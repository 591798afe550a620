"""The console's job page shows every attempt of an occurrence under it, in a real headless Chromium against the
real function_app.py under the local host and real local targets: a job retried twice 15 s apart (Fixed) with an
Http error action, run once against a target answering 500. Its history lists the occurrence, then its three
failed attempts and its completed error action; the chart counts the same four attempts, as the job's counters
(attempts / failed / faulted occurrences) do."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import requests
from selenium.webdriver.common.by import By

from tests.executor.peers.servers import Hit, Server, ok, serve

from .browser import screenshot, wait_until
from .conftest import V

COLLECTION = "subscriptions/tries-sub/resourceGroups/tries-rg/providers/Microsoft.Scheduler/jobCollections/tries"


def _unavailable(hit: Hit) -> tuple[int, dict[str, str], bytes]:
    return 500, {"Content-Type": "text/plain"}, b"try later"


@pytest.fixture(scope="module")
def targets() -> Iterator[tuple[Server, Server]]:
    failing, fallback = serve(_unavailable), serve(ok)
    try:
        yield failing, fallback
    finally:
        failing.close()
        fallback.close()


@pytest.fixture(scope="module")
def site(host_url: str, targets: tuple[Server, Server]) -> str:
    failing, fallback = targets
    made = requests.put(f"{host_url}/{COLLECTION}", params=V, timeout=10, json={"location": "westeurope"})
    assert made.status_code in (200, 201), made.text
    job = requests.put(
        f"{host_url}/{COLLECTION}/jobs/flaky",
        params=V,
        timeout=10,
        json={
            "properties": {
                "recurrence": {"frequency": "Day", "schedule": {"hours": [3], "minutes": [0]}},
                "action": {
                    "type": "Http",
                    "request": {"uri": f"{failing.url}/work", "method": "POST"},
                    "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 2},
                    "errorAction": {"type": "Http", "request": {"uri": f"{fallback.url}/alarm", "method": "POST"}},
                },
            }
        },
    )
    assert job.status_code in (200, 201), job.text
    assert requests.post(f"{host_url}/{COLLECTION}/jobs/flaky/run", params=V, timeout=10).status_code == 200
    deadline = time.monotonic() + 150  # two retries 15 s apart, then the error action, on a busy machine
    while len(fallback.hits) < 1 and time.monotonic() < deadline:
        time.sleep(1)
    assert len(failing.hits) == 3 and len(fallback.hits) == 1
    return host_url


def test_the_job_page_lists_each_attempt_under_its_occurrence_and_counts_them_as_the_counters_do(
    site: str, browser
) -> None:
    def rows() -> list[list[str]]:
        table = browser.find_element(By.ID, "history-table")
        return [
            [c.text for c in r.find_elements(By.CSS_SELECTOR, "th, td")]
            for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")
        ]

    def counters() -> str:
        return browser.find_element(By.ID, "counters").text

    browser.get(f"{site}/console/{COLLECTION}/jobs/flaky")
    # The error action's entry and the job's counters are written just after its request (history first):
    # reload until the page has both.
    for _ in range(30):
        found = wait_until(rows, timeout=45, what="the history table")
        if len(found) == 5 and counters() == "4 / 3 / 1":
            break
        time.sleep(1)
        browser.refresh()
    occurrence, *attempts = rows()
    assert occurrence[1:3] == ["RunNow", "Failed"] and occurrence[5] == "3 attempts, then the error action (Completed)"
    assert [(a[0], a[1], a[2]) for a in attempts] == [
        ("", "attempt 1", "Failed"),
        ("", "retry 1", "Failed"),
        ("", "retry 2", "Failed"),
        ("", "error action", "Completed"),
    ]
    classes = [r.get_attribute("class") for r in browser.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")]
    assert classes == ["occurrence-row"] + ["attempt-row"] * 4
    desc = browser.find_element(By.CSS_SELECTOR, "#history svg[role='img'] desc").get_attribute("textContent")
    assert desc.startswith("4 attempts of 1 occurrence: 1 succeeded, 3 failed, 0 other;")
    assert counters() == "4 / 3 / 1"
    browser.execute_script("document.getElementById('history').scrollIntoView()")
    screenshot(browser, "console-job-attempts")
