"""The console's occurrences page (.../jobs/J?action=occurrences, newer api-version) in a real headless
Chromium: the next occurrences with their notes, a what-if of an edited definition that writes nothing, and the
ledger, their times in the job's zone; and the job page's backfill, which shows what would run before it runs."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
import requests
from selenium.webdriver.common.by import By

from shared.model import PREVIEW_API_VERSION

from .browser import screenshot, wait_until

NEWER = {"api-version": PREVIEW_API_VERSION}
COLLECTION = "subscriptions/occ-sub/resourceGroups/occ-rg/providers/Microsoft.Scheduler/jobCollections/occ-jc"


@pytest.fixture(scope="module")
def job_url(host_url: str) -> str:
    assert requests.put(
        f"{host_url}/{COLLECTION}",
        params=NEWER,
        timeout=10,
        json={"location": "westeurope", "properties": {"sku": {"name": "Standard"}}},
    ).status_code in (200, 201)
    start = (datetime.now(UTC) + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    job = requests.put(
        f"{host_url}/{COLLECTION}/jobs/nightly",
        params=NEWER,
        timeout=10,
        json={
            "properties": {
                "startTime": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "recurrence": {"frequency": "Day", "count": 3, "schedule": {"hours": [2], "minutes": [30]}},
                "missedRunPolicy": {"type": "Skip"},
                "action": {"type": "Http", "request": {"uri": f"{host_url}/openapi.json", "method": "GET"}},
            }
        },
    )
    assert job.status_code in (200, 201), job.text
    return f"{host_url}/console/{COLLECTION}/jobs/nightly"


def test_the_page_previews_and_asks_what_if_without_writing(job_url: str, host_url: str, browser) -> None:
    browser.get(f"{job_url}?action=occurrences")
    rows = lambda: browser.find_elements(By.CSS_SELECTOR, "#preview tbody tr")  # noqa: E731
    wait_until(lambda: len(rows()) == 3, what="the three occurrences")
    assert "The last occurrence: the recurrence's count is reached." in rows()[-1].text
    editor = browser.find_element(By.ID, "what-if-definition")
    text = editor.get_attribute("value").replace('"count": 3', '"count": 5')
    browser.execute_script("arguments[0].value = arguments[1];", editor, text)
    browser.find_element(By.ID, "what-if-run").click()
    wait_until(lambda: browser.find_elements(By.ID, "what-if-summary"), what="the what-if answer")
    assert browser.find_element(By.ID, "what-if-summary").text.startswith("Modify: the job would be")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#what-if-result tbody tr")) == 5
    stored = requests.get(f"{host_url}/{COLLECTION}/jobs/nightly", params=NEWER, timeout=10).json()
    assert stored["properties"]["recurrence"]["count"] == 3  # nothing was written
    assert browser.find_element(By.ID, "ledger-heading").text == "Ledger"
    screenshot(browser, "console-occurrences")


@pytest.fixture(scope="module")
def zoned_job_url(job_url: str, host_url: str) -> str:
    """An hourly job in Asia/Kolkata (UTC+05:30) that started hours ago: it has past occurrences to backfill."""
    start = (datetime.now(UTC) - timedelta(hours=6)).replace(minute=0, second=0, microsecond=0)
    job = requests.put(
        f"{host_url}/{COLLECTION}/jobs/hourly",
        params=NEWER,
        timeout=10,
        json={
            "properties": {
                "startTime": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "recurrence": {"frequency": "Hour", "timeZone": "Asia/Kolkata"},
                "action": {"type": "Http", "request": {"uri": f"{host_url}/openapi.json", "method": "GET"}},
            }
        },
    )
    assert job.status_code in (200, 201), job.text
    return f"{host_url}/console/{COLLECTION}/jobs/hourly"


KOLKATA = r"\d{4}-\d\d-\d\d \d\d:30:00 Asia/Kolkata \((\d{4}-\d\d-\d\d )?\d\d:00:00 UTC\)"


def test_the_job_page_backfills_after_showing_what_would_run_in_the_jobs_zone(
    zoned_job_url: str, host_url: str, browser
) -> None:
    browser.get(zoned_job_url)
    wait_until(lambda: browser.find_elements(By.ID, "backfill-form"), what="the backfill form")
    assert "as wall-clock times in Asia/Kolkata" in browser.find_element(By.ID, "backfill-help").text
    assert not browser.find_element(By.ID, "backfill-run").is_displayed()  # nothing to run before a what-if
    browser.find_element(By.ID, "backfill-from").send_keys("PT3H")
    browser.find_element(By.ID, "backfill-preview").click()
    summary = wait_until(lambda: browser.find_element(By.ID, "backfill-summary"), what="the what-if")
    assert "would run again. Nothing is queued until you run them." in summary.text
    rows = browser.find_elements(By.CSS_SELECTOR, "#backfill-result tbody tr")
    assert 3 <= len(rows) <= 4 and all(re.search(KOLKATA, r.text) for r in rows), [r.text for r in rows]
    ledger = f"{host_url}/{COLLECTION}/jobs/hourly/history"
    assert requests.get(ledger, params=NEWER, timeout=10).json()["value"] == []  # the what-if queued nothing
    browser.find_element(By.ID, "backfill-run").click()
    done = wait_until(lambda: browser.find_element(By.ID, "backfill-done"), what="the backfill")
    assert done.text.startswith(f"Queued {len(rows)} occurrence")
    wait_until(
        lambda: len(requests.get(ledger, params=NEWER, timeout=10).json()["value"]) == len(rows),
        timeout=30,
        what="the backfilled occurrences in the ledger",
    )

    browser.get(f"{zoned_job_url}?action=occurrences")  # the preview and the ledger in the job's zone too
    wait_until(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#preview tbody tr")) == 10, what="the preview")
    preview = browser.find_elements(By.CSS_SELECTOR, "#preview tbody tr")
    assert all(len(re.findall(KOLKATA, r.text)) == 2 for r in preview), [r.text for r in preview]  # occurs, fires
    entries = browser.find_elements(By.CSS_SELECTOR, "#ledger tbody tr")
    assert len(entries) == len(rows) and all(re.search(KOLKATA, r.text) for r in entries), [e.text for e in entries]
    screenshot(browser, "console-backfill-zones")
