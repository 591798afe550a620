"""A collection's page lists its dead letters (dead-letters.js, from GET .../deadLetters, newer api-version) in a
real headless Chromium against the real function_app.py under the local host and a real target on loopback: a job
whose main action (no retries) and error action both fail (the target answers 500) is dead-lettered; its row names
the job, the occurrence and the first line of the last error; Show lists both attempts; Replay (the target
answering 200 by then) reaches the target once more with the original identity; Replay all and Purge wait for the
confirmation dialog (cancelled: nothing happens), and a confirmed purge leaves the list saying it is empty."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from selenium.webdriver.common.by import By

from shared.model.versions import PREVIEW
from tests.executor.peers.servers import Hit, Server, serve

from .browser import screenshot, wait_until
from .conftest import V

COLLECTION = "subscriptions/dead-sub/resourceGroups/dead-rg/providers/Microsoft.Scheduler/jobCollections/dead"
NEWER = {"api-version": PREVIEW}
# Past the host's queue visibility timeout (host.json: 5 s) and its polling (0.5 s): a second delivery of the
# replay's message would have reached the target by then.
SECOND_DELIVERY = 6.5


@pytest.fixture(scope="module")
def target() -> Iterator[tuple[Server, dict[str, int]]]:
    """A target answering each path with the status the test sets (500 until set)."""
    statuses: dict[str, int] = {}

    def answer(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        return statuses.get(hit.path, 500), {"Content-Type": "text/plain"}, b"try later\nsecond line"

    server = serve(answer)
    try:
        yield server, statuses
    finally:
        server.close()


def _letters(host_url: str) -> list[dict[str, Any]]:
    answer = requests.get(f"{host_url}/{COLLECTION}/deadLetters", params=NEWER, timeout=10)
    assert answer.status_code == 200, answer.text
    value: list[dict[str, Any]] = answer.json()["value"]
    return value


@pytest.fixture(scope="module")
def dead_lettered(host_url: str, target: tuple[Server, dict[str, int]]) -> str:
    """One run-now occurrence of `digest`, dead-lettered: its main action and its error action answered 500."""
    server, _ = target
    made = requests.put(f"{host_url}/{COLLECTION}", params=V, timeout=10, json={"location": "westeurope"})
    assert made.status_code in (200, 201), made.text
    never = {"retryType": "None"}
    action = {
        "type": "Http",
        "request": {"uri": f"{server.url}/work", "method": "POST", "body": "x"},
        "retryPolicy": never,
        "errorAction": {
            "type": "Http",
            "request": {"uri": f"{server.url}/alarm", "method": "POST"},
            "retryPolicy": never,
        },
    }
    # Its schedule starts tomorrow: only the run-now occurrence fires during the test.
    start = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    properties = {"startTime": start, "recurrence": {"frequency": "Day"}, "action": action}
    job = requests.put(f"{host_url}/{COLLECTION}/jobs/digest", params=V, timeout=10, json={"properties": properties})
    assert job.status_code in (200, 201), job.text
    assert requests.post(f"{host_url}/{COLLECTION}/jobs/digest/run", params=V, timeout=10).status_code == 200
    wait_until(lambda: _letters(host_url), timeout=30, what="the dead letter")
    assert [hit.path for hit in server.hits] == ["/work", "/alarm"]
    return host_url


def _rows(browser) -> list[list[str]]:
    table = browser.find_element(By.ID, "dead-letters-table")
    return [
        [c.text for c in r.find_elements(By.CSS_SELECTOR, "th, td")]
        for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")
    ]


def _confirm(browser, button: str, choice: str) -> None:
    browser.find_element(By.ID, button).click()
    wait_until(lambda: browser.find_element(By.ID, "confirm-ok").is_displayed(), what="the confirmation")
    browser.find_element(By.ID, choice).click()


def test_the_collection_page_lists_shows_and_replays_a_dead_letter_once_then_purges_it(
    dead_lettered: str, target: tuple[Server, dict[str, int]], browser
) -> None:
    host_url, (server, statuses) = dead_lettered, target
    browser.get(f"{host_url}/console/{COLLECTION}")
    wait_until(lambda: browser.find_element(By.ID, "dead-letters-table"), what="the dead letters table")
    [row] = _rows(browser)
    assert row[0] == "digest" and row[1].endswith(" UTC") and row[2].endswith(" UTC")
    assert row[3] == "retries spent, then the error action" and row[4] == "DeadLettered"
    assert "Internal Server Error" in row[5] and "second line" not in row[5]  # the last error's first line only

    browser.find_element(By.CSS_SELECTOR, "#dead-letters-table .show-dead-letter").click()
    shown = wait_until(lambda: browser.find_element(By.ID, "dead-letter-attempts"), what="the attempts")
    attempts = [
        [c.text for c in r.find_elements(By.CSS_SELECTOR, "th, td")]
        for r in shown.find_elements(By.CSS_SELECTOR, "tbody tr")
    ]
    assert [(a[1], a[2]) for a in attempts] == [("error action", "Failed"), ("attempt 1", "Failed")]
    assert server.hits[0].headers["idempotency-key"] in browser.find_element(By.ID, "dead-letter-detail").text
    screenshot(browser, "console-dead-letters")

    _confirm(browser, "replay-all-dead-letters", "confirm-cancel")
    wait_until(lambda: browser.find_element(By.ID, "status").text == "Replay cancelled.", what="replay cancelled")
    _confirm(browser, "purge-dead-letters", "confirm-cancel")
    wait_until(lambda: browser.find_element(By.ID, "status").text == "Purge cancelled.", what="purge cancelled")
    assert len(_letters(host_url)) == 1 and len(server.hits) == 2

    statuses["/work"] = 200
    browser.find_element(By.CSS_SELECTOR, "#dead-letters-table .replay-dead-letter").click()
    answer = wait_until(lambda: browser.find_element(By.ID, "dead-letters-answer"), what="the replay's answer")
    assert answer.text.startswith("Replay of digest at ") and answer.text.endswith("queued: Replaying, replay 1.")
    wait_until(lambda: len(server.hits) == 3, timeout=30, what="the replay at the target")
    time.sleep(SECOND_DELIVERY)
    assert [hit.path for hit in server.hits] == ["/work", "/alarm", "/work"]  # once, and no error action
    for header in ("idempotency-key", "x-ms-execution-tag"):
        assert server.hits[2].headers[header] == server.hits[0].headers[header]

    browser.refresh()
    wait_until(lambda: _rows(browser)[0][4] == "Resolved (replayed 1×)", what="the resolved dead letter")
    _confirm(browser, "purge-dead-letters", "confirm-ok")
    empty = wait_until(lambda: browser.find_element(By.ID, "dead-letters-none"), what="the emptied list")
    assert empty.text.startswith("No dead letters")
    assert browser.find_element(By.ID, "dead-letters-answer").text == "Purged 1 dead letter."
    assert _letters(host_url) == []
