"""The console's occurrences page (.../jobs/J?action=occurrences, newer api-version) in a real headless
Chromium: the next occurrences with their notes, a what-if of an edited definition that writes nothing, and the
ledger."""

from __future__ import annotations

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
