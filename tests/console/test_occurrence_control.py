"""Occurrence control in the console (issue 39), in a real headless Chromium against the real function_app.py under
the local host: an occurrence skipped from the preview leaves it and is listed as an exception until cancelled; one
moved runs at its new instant; an extra run is added; a refusal of the API (a skip of an instant that is no longer
an occurrence) is shown naming the nearest occurrences; a pause with a note is shown on the job's page until it is
resumed; a cron job created through the form, with a DST policy, previews its instants."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.select import Select

from shared.model import PREVIEW_API_VERSION

from .browser import full_page_screenshot, reset_width, screenshot, wait_until

NEWER = {"api-version": PREVIEW_API_VERSION}
COLLECTION = "subscriptions/oc-sub/resourceGroups/oc-rg/providers/Microsoft.Scheduler/jobCollections/oc-jc"
ZONE = "Asia/Kolkata"  # UTC+05:30 all year: 08:00 there is 02:30 UTC
TOMORROW = (datetime.now(UTC) + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)


def _utc(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _kolkata(at: datetime) -> str:
    """An instant as the console shows it in the job's zone, UTC beside."""
    return f"{(at + timedelta(hours=5, minutes=30)):%Y-%m-%d %H:%M:%S} {ZONE} ({at:%H:%M:%S} UTC)"


def _daily(day: int) -> datetime:
    """The job's occurrence `day` days after tomorrow's (02:30 UTC, 08:00 in Kolkata)."""
    return TOMORROW + timedelta(days=day, hours=2, minutes=30)


@pytest.fixture(scope="module")
def site(host_url: str) -> str:
    answer = requests.put(
        f"{host_url}/{COLLECTION}",
        params=NEWER,
        timeout=10,
        json={"location": "westeurope", "properties": {"sku": {"name": "Standard"}}},
    )
    assert answer.status_code in (200, 201), answer.text
    return host_url


@pytest.fixture
def daily_job(site: str) -> Callable[[str], str]:
    """A job of its own per test: daily at 08:00 Kolkata from tomorrow, its target on this host (loopback)."""

    def create(name: str) -> str:
        job = requests.put(
            f"{site}/{COLLECTION}/jobs/{name}",
            params=NEWER,
            timeout=10,
            json={
                "properties": {
                    "startTime": _utc(TOMORROW),
                    "recurrence": {"frequency": "Day", "timeZone": ZONE, "schedule": {"hours": [8], "minutes": [0]}},
                    "action": {"type": "Http", "request": {"uri": f"{site}/openapi.json", "method": "GET"}},
                }
            },
        )
        assert job.status_code in (200, 201), job.text
        return f"{site}/{COLLECTION}/jobs/{name}"

    return create


def _stored(job: str) -> dict:
    answer = requests.get(job, params=NEWER, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()["properties"]


def _preview_rows(browser) -> list[str]:
    return [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#preview tbody tr")]


def _open_occurrences(browser, job: str) -> None:
    browser.get(f"{job.replace('/api/', '/api/console/', 1)}?action=occurrences")
    wait_until(lambda: len(_preview_rows(browser)) == 10, what="the ten previewed occurrences")


def _row_of(browser, at: datetime):
    shown = _kolkata(at)
    rows = [r for r in browser.find_elements(By.CSS_SELECTOR, "#preview tbody tr") if shown in r.text]
    assert len(rows) == 1, (shown, _preview_rows(browser))
    return rows[0]


def test_an_occurrence_skipped_from_the_preview_leaves_it_and_is_listed_until_cancelled(daily_job, browser) -> None:
    job = daily_job("skipped")
    _open_occurrences(browser, job)
    skipped = _daily(1)
    _row_of(browser, skipped).find_element(By.CSS_SELECTOR, "button.skip-occurrence").click()
    title = wait_until(lambda: browser.find_element(By.ID, "exception-title"), what="the skip's form")
    assert title.text == f"Skip the occurrence at {_kolkata(skipped)}"
    assert browser.switch_to.active_element.get_attribute("id") == "exception-note"
    browser.find_element(By.ID, "exception-note").send_keys("bank holiday")
    browser.find_element(By.ID, "exception-save").click()

    listed = wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, "#exceptions-table tbody tr"), what="the list")
    assert [c.text for c in listed[0].find_elements(By.CSS_SELECTOR, "th, td")][:4] == [
        "Skip",
        _kolkata(skipped),
        "—",
        "bank holiday",
    ]
    wait_until(lambda: len(_preview_rows(browser)) == 10, what="the preview again")
    assert not any(_kolkata(skipped) in r for r in _preview_rows(browser))  # gone: the next day's comes instead
    assert _kolkata(_daily(10)) in _preview_rows(browser)[-1]
    said = browser.find_element(By.ID, "preview-notes").text
    assert "Excepted" in said and f"{_utc(skipped)} is skipped by an exception (bank holiday)." in said
    assert _stored(job)["exceptions"] == [{"type": "Skip", "occurrence": _utc(skipped), "note": "bank holiday"}]
    full_page_screenshot(browser, "console-occurrence-skipped", 1280)
    reset_width(browser)

    browser.find_element(By.ID, "cancel-exception-0").click()
    wait_until(lambda: browser.find_elements(By.ID, "exceptions-none"), what="no exception left")
    wait_until(lambda: len(_preview_rows(browser)) == 10, what="the preview again")
    assert _kolkata(skipped) in _preview_rows(browser)[1]  # back in its place
    assert not _stored(job).get("exceptions")


def test_a_moved_occurrence_runs_at_its_new_time_and_an_extra_run_is_added(daily_job, browser) -> None:
    job = daily_job("moved")
    _open_occurrences(browser, job)
    moved = _daily(2)
    _row_of(browser, moved).find_element(By.CSS_SELECTOR, "button.move-occurrence").click()
    to = wait_until(lambda: browser.find_element(By.ID, "exception-at"), what="the move's form")
    assert to.get_attribute("value") == f"{moved + timedelta(hours=5, minutes=30):%Y-%m-%dT%H:%M}"  # its wall time
    to.clear()
    to.send_keys(f"{moved:%Y-%m-%d}T10:15")  # 10:15 in Kolkata: 04:45 UTC
    browser.find_element(By.ID, "exception-save").click()
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, "#exceptions-table tbody tr"), what="the list")
    wait_until(lambda: len(_preview_rows(browser)) == 10, what="the preview again")
    target = moved.replace(hour=4, minute=45)
    row = _row_of(browser, target)
    assert "Moved" in row.text and f"Moved here from {_utc(moved)} by an exception." in row.text
    assert not row.find_elements(By.CSS_SELECTOR, "button.skip-occurrence")  # an exception's: cancel it instead
    assert not any(_kolkata(moved) in r for r in _preview_rows(browser))

    extra = _daily(0) + timedelta(hours=6)
    browser.find_element(By.ID, "add-run").click()
    at = wait_until(lambda: browser.find_element(By.ID, "exception-at"), what="the add's form")
    at.send_keys(_utc(extra))  # with Z: that instant, whatever the job's zone
    browser.find_element(By.ID, "exception-note").send_keys("catch-up")
    browser.find_element(By.ID, "exception-save").click()
    wait_until(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#exceptions-table tbody tr")) == 2, what="two")
    wait_until(lambda: len(_preview_rows(browser)) == 10, what="the preview again")
    assert "An extra run, added by an exception (catch-up)." in _row_of(browser, extra).text
    assert _stored(job)["exceptions"] == [
        {"type": "Move", "occurrence": _utc(moved), "moveTo": _utc(target)},
        {"type": "Add", "occurrence": _utc(extra), "note": "catch-up"},
    ]
    full_page_screenshot(browser, "console-occurrence-moved", 1280)
    reset_width(browser)


def test_a_skip_of_an_instant_no_longer_an_occurrence_shows_the_apis_refusal(daily_job, browser) -> None:
    job = daily_job("stale")
    _open_occurrences(browser, job)
    changed = requests.patch(  # another client moves the schedule to 08:15 while the page shows 08:00
        job, params=NEWER, timeout=10, json={"properties": {"recurrence": {"schedule": {"minutes": [15]}}}}
    )
    assert changed.status_code == 200, changed.text
    _row_of(browser, _daily(0)).find_element(By.CSS_SELECTOR, "button.skip-occurrence").click()
    wait_until(lambda: browser.find_element(By.ID, "exception-save"), what="the skip's form").click()
    refusal = wait_until(lambda: browser.find_element(By.CSS_SELECTOR, "#exception-result [role=alert]"), what="it")
    assert refusal.text.startswith("Skip: BadRequest (400): properties.exceptions[0].occurrence: ")
    assert f"{_utc(_daily(0))} is not an occurrence of the job" in refusal.text
    assert f"after it {_utc(_daily(0) + timedelta(minutes=15))}" in refusal.text  # the nearest one
    assert not _stored(job).get("exceptions")


def test_a_pause_with_a_note_is_shown_on_the_job_until_resumed(daily_job, browser) -> None:
    job = daily_job("paused")
    page = job.replace("/api/", "/api/console/", 1)
    browser.get(page)
    wait_until(lambda: browser.find_element(By.ID, "pause-open"), what="the job's page").click()
    until = TOMORROW + timedelta(days=3, hours=6, minutes=30)  # 12:00 in Kolkata
    field = wait_until(lambda: browser.find_element(By.ID, "pause-until"), what="the pause's form")
    assert browser.switch_to.active_element == field
    field.send_keys(f"{until + timedelta(hours=5, minutes=30):%Y-%m-%dT%H:%M}")  # a wall-clock time there
    browser.find_element(By.ID, "pause-note").send_keys("database migration")
    browser.find_element(By.ID, "pause-save").click()
    banner = wait_until(lambda: browser.find_element(By.ID, "pause-banner"), what="the pause's banner")
    assert banner.text == f"Paused until {_kolkata(until)}: database migration"
    assert _stored(job)["pause"] == {"until": _utc(until), "note": "database migration"}
    # What the pause holds fires at its end: the next occurrences are the API's preview, no longer the schedule's.
    first = browser.find_elements(By.CSS_SELECTOR, "#occurrences li")[0].text
    assert first == _kolkata(until), first
    screenshot(browser, "console-job-paused")

    browser.find_element(By.ID, "resume").click()
    wait_until(lambda: not browser.find_elements(By.ID, "pause-banner"), what="the banner gone")
    wait_until(lambda: not browser.find_elements(By.ID, "resume"), what="Resume now gone")
    assert "pause" not in _stored(job)


def test_a_cron_job_created_with_the_form_previews_its_instants(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}?action=create")
    wait_until(lambda: browser.find_element(By.ID, "preview-list"), what="the form")
    browser.find_element(By.ID, "job-name").send_keys("cron")
    uri = browser.find_element(By.ID, "action-uri")
    uri.clear()
    uri.send_keys(f"{site}/openapi.json")  # never anywhere but this host
    Select(browser.find_element(By.ID, "schedule-kind")).select_by_value("cron")
    cron = wait_until(lambda: browser.find_element(By.ID, "schedule-cron"), what="the cron field")
    assert not browser.find_elements(By.ID, "schedule-frequency")
    cron.clear()
    cron.send_keys("15 6 * * *")
    zone = browser.find_element(By.ID, "schedule-zone")
    zone.send_keys(Keys.CONTROL, "a")
    zone.send_keys(Keys.BACKSPACE)  # typed away, as a person would (input events)
    assert not browser.find_element(By.ID, "dst-policy").is_displayed()  # no zone, no DST policy
    zone.send_keys("Europe/Berlin")
    Select(wait_until(lambda: browser.find_element(By.ID, "schedule-dst-gap"), what="the DST policy")).select_by_value(
        "Skip"
    )
    wait_until(
        lambda: browser.find_element(By.ID, "preview-words").text == "on cron '15 6 * * *' (Europe/Berlin)",
        what="the cron's summary",
    )

    def cron_preview() -> bool:  # read as one: the list may be drawn anew after the summary (a stale item is retried)
        shown = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#preview-list li")]
        return len(shown) == 10 and all(" 06:15:00 Europe/Berlin (" in s for s in shown)

    wait_until(cron_preview, what="the cron's ten instants at 06:15 in Berlin")
    screenshot(browser, "console-job-form-cron")
    browser.find_element(By.ID, "save").click()
    wait_until(lambda: browser.current_url.endswith(f"{COLLECTION}/jobs/cron"), what="the job's page")

    recurrence = _stored(f"{site}/{COLLECTION}/jobs/cron")["recurrence"]
    assert {k: v for k, v in recurrence.items() if k != "interval"} == {
        "cron": "15 6 * * *",
        "timeZone": "Europe/Berlin",
        "dstPolicy": {"gap": "Skip"},
    }
    assert recurrence.get("interval", 1) == 1
    browser.get(f"{site}/console/{COLLECTION}/jobs/cron?action=occurrences")
    wait_until(lambda: len(_preview_rows(browser)) == 10, what="the cron job's preview")
    instants = [
        r.find_elements(By.CSS_SELECTOR, "td")[0].text
        for r in browser.find_elements(By.CSS_SELECTOR, "#preview tbody tr")
    ]
    assert all(" 06:15:00 Europe/Berlin (" in i for i in instants), instants
    days = [datetime.strptime(i.split(" ")[0], "%Y-%m-%d").date() for i in instants]
    assert all(b - a == timedelta(days=1) for a, b in zip(days, days[1:], strict=False)), days
    screenshot(browser, "console-cron-job")
