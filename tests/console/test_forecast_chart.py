"""The collection page draws the load forecast of the next 24 hours (forecast.js, from GET .../forecast) in a real
headless Chromium against the real function_app.py under the local host: one bar per minute with occurrences,
the minutes holding a second over a destination's rate limit marked, and those seconds listed.

Two hourly jobs fire at the same second to a host limited to one request a second, from hours ahead (nothing
fires while the test runs): every one of their seconds is over the limit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import requests
from selenium.webdriver.common.by import By

from shared.model.versions import NEWEST

from .browser import screenshot, wait_until

SUB, RG, JC = "forecast-sub", "forecast-rg", "forecast"
COLLECTION = f"subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{JC}"
NEW = {"api-version": NEWEST.name}
START = (datetime.now(UTC) + timedelta(hours=2)).replace(minute=0, second=0, microsecond=0)


@pytest.fixture(scope="module")
def site(host_url: str) -> str:
    made = requests.put(
        f"{host_url}/{COLLECTION}",
        params=NEW,
        timeout=10,
        json={
            "location": "westeurope",
            "properties": {"targetRateLimits": [{"host": "127.0.0.1", "requestsPerSecond": 1}]},
        },
    )
    assert made.status_code in (200, 201), made.text
    for name in ("first", "second"):
        job = requests.put(
            f"{host_url}/{COLLECTION}/jobs/{name}",
            params=NEW,
            timeout=10,
            json={
                "properties": {
                    "startTime": START.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/ping", "method": "POST"}},
                    "recurrence": {"frequency": "Hour", "interval": 1},
                }
            },
        )
        assert job.status_code == 201, job.text
    return host_url


def test_the_collection_page_charts_the_next_24_hours_and_lists_the_seconds_over_a_limit(site: str, browser) -> None:
    answer = requests.get(f"{site}/{COLLECTION}/forecast", params=NEW, timeout=10).json()
    browser.get(f"{site}/console/{COLLECTION}")
    chart = wait_until(lambda: browser.find_element(By.CSS_SELECTOR, "#forecast-chart svg"), what="the forecast chart")
    bars = chart.find_elements(By.CSS_SELECTOR, "g.over-limit")
    assert len(bars) == len(answer["minutes"]) >= 20  # every minute holds a second over the limit
    assert chart.find_elements(By.CSS_SELECTOR, "g.within") == []
    caption = browser.find_element(By.CSS_SELECTOR, "#forecast-chart figcaption").text
    assert f"{2 * len(answer['minutes'])} occurrences in the next 24 hours" in caption
    listed = browser.find_element(By.ID, "forecast-over-limit").text
    first = START.strftime("%Y-%m-%d %H:%M:%S")
    assert listed.startswith(f"127.0.0.1 (at most 1/s): {first} UTC (2)")
    assert f"and {len(answer['minutes']) - 10} more" in listed  # ten listed, the rest counted
    screenshot(browser, "console-collection-forecast")
