"""The console shows and sets issue 27's members, in a real headless Chromium against the real function_app.py
under the local host: a job's overlap policy and spread window (its page and its form), its occurrences that
wait, ran late or were skipped by the overlap policy (read from the ledger), and a collection's limits (with
issue 40's autoSpread)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.select import Select

from shared.keys import JobKey
from shared.model import JobExecutionStatus, LedgerReason, WaitCause
from shared.model.versions import NEWEST
from shared.occurrence import Trigger, execution_id
from shared.records import LedgerEntry
from shared.settings import Settings, StorageSettings
from shared.store import Store
from tests.support.local_host import local_host

from .browser import screenshot, wait_until

SUB, RG, JC, JOB = "limits-sub", "limits-rg", "limited", "slow"
COLLECTION = f"subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{JC}"
NEW = {"api-version": NEWEST.name}


@pytest.fixture(scope="module")
def prefix() -> str:
    return f"h{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def host_url(azurite, prefix: str) -> Iterator[str]:
    with local_host(azurite, SCHEDULER_TABLE_PREFIX=prefix) as base:
        yield base


@pytest.fixture(scope="module")
def site(host_url: str, azurite, prefix: str) -> str:
    made = requests.put(
        f"{host_url}/{COLLECTION}",
        params=NEW,
        timeout=10,
        json={
            "location": "westeurope",
            "properties": {
                "maxConcurrentExecutions": 10,
                "targetRateLimits": [{"host": "api.example.com", "requestsPerSecond": 50}],
                "autoSpread": {"tolerance": "PT45S"},
            },
        },
    )
    assert made.status_code in (200, 201), made.text
    job = requests.put(
        f"{host_url}/{COLLECTION}/jobs/{JOB}",
        params=NEW,
        timeout=10,
        json={
            "properties": {
                "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/slow", "method": "POST"}},
                "recurrence": {"frequency": "Minute", "interval": 5},
                "overlapPolicy": "Skip",
                "spreadWindow": "PT30S",
            }
        },
    )
    assert job.status_code == 201, job.text
    store = Store.from_settings(
        Settings(storage=StorageSettings(connection_string=azurite.connection_string), table_prefix=prefix)
    )
    key = JobKey(SUB, RG, JC, JOB)
    now = datetime.now(UTC).replace(microsecond=0)
    ran, skipped, waits = now - timedelta(minutes=10), now - timedelta(minutes=5), now

    def entry(at: datetime, status: JobExecutionStatus, message: str, **more) -> LedgerEntry:
        return LedgerEntry(key, execution_id(key, at, Trigger.SCHEDULE), at, "schedule", status, message, **more)

    store.history.add_all(
        [],
        [
            entry(
                ran,
                JobExecutionStatus.COMPLETED,
                "Http Action - Response from host '127.0.0.1': 'OK'",
                start_time=ran + timedelta(seconds=42),
                end_time=ran + timedelta(seconds=50),
                attempts=1,
                waited=timedelta(seconds=42),
                waited_for=WaitCause.CONCURRENCY,
            ),
            entry(
                skipped,
                JobExecutionStatus.SKIPPED,
                "Not run: an earlier occurrence was still running (overlapPolicy Skip).",
                reason=LedgerReason.SKIPPED_BY_OVERLAP,
                start_time=skipped,
                end_time=skipped,
            ),
            entry(
                waits,
                JobExecutionStatus.WAITING,
                "Waiting for its turn under its target host's requestsPerSecond (targetRateLimits).",
                reason=LedgerReason.WAITING_FOR_RATE_LIMIT,
                start_time=waits,
            ),
        ],
    )
    return host_url


def test_the_job_page_shows_the_policy_and_what_waited_or_was_skipped(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}/jobs/{JOB}")
    table = wait_until(lambda: browser.find_element(By.ID, "overlap-table"), what="the overlap table")
    assert browser.find_element(By.ID, "overlap-policy").text.startswith("Skip:")
    assert browser.find_element(By.ID, "spread-window").text.startswith("PT30S")
    rows = [r.text for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert len(rows) == 3
    assert "Waiting" in rows[0] and "WaitingForRateLimit" in rows[0]
    assert "SkippedByOverlap" in rows[1]
    assert "PT42S (Concurrency)" in rows[2]
    screenshot(browser, "console-job-overlap")


def test_the_collection_page_shows_its_limits(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}")
    limits = wait_until(lambda: browser.find_element(By.ID, "rate-limits"), what="the collection's limits")
    assert limits.text == "api.example.com: 50/s"
    assert browser.find_element(By.ID, "max-concurrent").text.startswith("at most 10 at once")
    assert browser.find_element(By.ID, "auto-spread").text.endswith("fire up to PT45S later")


def test_the_form_sets_the_overlap_policy_and_spread_window(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}/jobs/{JOB}?action=edit")
    overlap = wait_until(lambda: browser.find_element(By.ID, "job-overlap"), what="the overlap field")
    spread = browser.find_element(By.ID, "job-spread")
    assert Select(overlap).first_selected_option.get_attribute("value") == "Skip"
    assert spread.get_attribute("value") == "30"
    Select(overlap).select_by_value("BufferOne")
    spread.clear()
    spread.send_keys("45")
    browser.find_element(By.ID, "save").click()
    wait_until(lambda: browser.current_url.endswith(f"/jobs/{JOB}"), what="the job page after saving")
    stored = requests.get(f"{site}/{COLLECTION}/jobs/{JOB}", params=NEW, timeout=10).json()["properties"]
    assert (stored["overlapPolicy"], stored["spreadWindow"]) == ("BufferOne", "PT45S")
    assert stored["recurrence"]["interval"] == 5
    browser.get(f"{site}/console/{COLLECTION}/jobs/{JOB}?action=edit")
    spread = wait_until(lambda: browser.find_element(By.ID, "job-spread"), what="the spread field")
    spread.clear()
    spread.send_keys("600")  # longer than the 5-minute interval: the API's refusal at the field
    browser.find_element(By.ID, "save").click()
    error = wait_until(lambda: browser.find_element(By.ID, "job-spread-error"), what="the refusal at the field")
    assert error.text.startswith("BadRequest: properties.spreadWindow:")


def test_a_spread_jobs_next_occurrences_are_the_instants_it_fires(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}/jobs/{JOB}")
    wait_until(lambda: browser.find_element(By.ID, "spread-note"), what="the spread note")
    shown = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#occurrences li")]
    fires = requests.get(f"{site}/{COLLECTION}/jobs/{JOB}/occurrences", params={**NEW, "count": 10}, timeout=10)
    wanted = [o["fireTime"] for o in fires.json()["value"]]
    assert len(shown) == 10 and [s.split(" UTC")[0] for s in shown] == [
        w.replace("T", " ").replace("Z", "") for w in wanted
    ]
