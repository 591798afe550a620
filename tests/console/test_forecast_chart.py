"""The collection page draws the load forecast of the next 24 hours (forecast.js, from GET .../forecast) in a real
headless Chromium against the real function_app.py under the local host: one bar per minute with occurrences,
the minutes holding a second over a destination's rate limit marked, and those seconds listed.

Two hourly jobs fire at the same second to a host limited to one request a second, from hours ahead (nothing
fires while the test runs): every one of their seconds is over the limit. In a collection with autoSpread the
second of them is counted a second later, so nothing is over the limit, and the section says why."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import requests
from selenium.webdriver.common.by import By

from shared.model.versions import NEWEST

from .browser import screenshot, wait_until

SUB, RG, JC = "forecast-sub", "forecast-rg", "forecast"
COLLECTION = f"subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{JC}"
SPREAD = f"subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/spread"
NEW = {"api-version": NEWEST.name}
START = (datetime.now(UTC) + timedelta(hours=2)).replace(minute=0, second=0, microsecond=0)


def collection(host_url: str, path: str, **more: object) -> None:
    made = requests.put(
        f"{host_url}/{path}",
        params=NEW,
        timeout=10,
        json={
            "location": "westeurope",
            "properties": {"targetRateLimits": [{"host": "127.0.0.1", "requestsPerSecond": 1}], **more},
        },
    )
    assert made.status_code in (200, 201), made.text
    for name in ("first", "second"):
        job = requests.put(
            f"{host_url}/{path}/jobs/{name}",
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


@pytest.fixture(scope="module")
def site(host_url: str) -> str:
    collection(host_url, COLLECTION)
    collection(host_url, SPREAD, autoSpread={"tolerance": "PT30S"})
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
    assert browser.find_elements(By.ID, "forecast-spread") == []
    assert browser.find_element(By.ID, "auto-spread").text == "off"
    screenshot(browser, "console-collection-forecast")


def test_with_auto_spread_the_crowded_seconds_are_counted_where_they_fire(site: str, browser) -> None:
    browser.get(f"{site}/console/{SPREAD}")
    note = wait_until(lambda: browser.find_element(By.ID, "forecast-spread"), what="the spread note")
    assert "up to PT30S later" in note.text
    assert browser.find_element(By.ID, "forecast-over-limit").text == "No second goes over a destination's rate limit."
    chart = browser.find_element(By.CSS_SELECTOR, "#forecast-chart svg")
    assert chart.find_elements(By.CSS_SELECTOR, "g.over-limit") == []
    assert chart.find_elements(By.CSS_SELECTOR, "g.within") != []
    assert browser.find_element(By.ID, "auto-spread").text.endswith("fire up to PT30S later")
