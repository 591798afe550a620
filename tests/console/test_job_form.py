"""The console's job form in a real headless Chromium against the real function_app.py under the local host:
a job created without writing JSON (action type and fields, a header, the body, Basic authentication, retry,
an error action, a weekly schedule at a time in a time zone) with the live preview from the engine; edited
back through the same form, secrets kept; the API's refusal shown at the field it names; the JSON tab
warning about a member the API ignores, and its changes carried back to the form; the preview beside the schedule's
fields, in sight while they change at 1366x768, week days dropped with a daily frequency, and nothing shown as
"null" under a preview's error; a save with an end already past saying the job will never run."""

from __future__ import annotations

import base64
import json

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.select import Select

from shared.model.versions import NEWEST

from .browser import reset_width, screenshot, set_width, wait_until
from .conftest import V

COLLECTION = "subscriptions/form-sub/resourceGroups/form-rg/providers/Microsoft.Scheduler/jobCollections/forms"


@pytest.fixture(scope="module")
def site(host_url: str) -> str:
    answer = requests.put(f"{host_url}/{COLLECTION}", params=V, timeout=10, json={"location": "westeurope"})
    assert answer.status_code in (200, 201), answer.text
    return host_url


def _type(browser, element_id: str, text: str) -> None:
    """Types into the field, once it is there (a choice may have just made it appear)."""
    element = wait_until(lambda: browser.find_element(By.ID, element_id), what=element_id)
    element.clear()
    element.send_keys(text)


def _choose(browser, element_id: str, value: str) -> None:
    Select(browser.find_element(By.ID, element_id)).select_by_value(value)


def _stored(site: str, name: str) -> dict:
    """The job as the console reads it: in the newest api-version, which shows the extensions (timeZone)."""
    answer = requests.get(f"{site}/{COLLECTION}/jobs/{name}", params={"api-version": NEWEST.name}, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()["properties"]


def test_a_job_is_created_and_edited_with_the_form(site: str, browser, http_target) -> None:
    browser.get(f"{site}/console/{COLLECTION}?action=create")
    wait_until(lambda: browser.find_element(By.ID, "preview-list"), what="the form and its preview")
    _type(browser, "job-name", "nightly")
    _type(browser, "action-uri", f"{http_target.url}/form")
    browser.find_element(By.ID, "action-add-header").click()
    _type(browser, "action-header-name-0", "X-Test")
    _type(browser, "action-header-value-0", "1")
    _type(browser, "action-body", "from the form")
    _choose(browser, "action-auth", "Basic")
    _type(browser, "action-username", "robot")
    _type(browser, "action-password", "pw-secret")
    _choose(browser, "action-retry", "Fixed")
    _type(browser, "action-retry-interval", "60")
    _type(browser, "action-retry-count", "2")
    browser.find_element(By.ID, "error-action-on").click()
    _type(browser, "error-uri", f"{http_target.url}/failed")

    _type(browser, "schedule-times", "09:00, 17:30")  # hours x minutes: the form says what else that means
    note = browser.find_element(By.ID, "schedule-times-note")
    wait_until(lambda: "also runs at 09:30, 17:00" in note.text, what="the combination warning")
    _type(browser, "schedule-times", "09:00")
    browser.find_element(By.ID, "day-friday").click()  # off
    browser.find_element(By.ID, "day-wednesday").click()  # on
    _type(browser, "schedule-zone", "America/New_York")
    wait_until(
        lambda: (
            browser.find_element(By.ID, "preview-words").text == "every Monday and Wednesday at 09:00 America/New_York"
        ),
        what="the new preview",
    )
    first = browser.find_elements(By.CSS_SELECTOR, "#preview-list li")[0].text
    assert " 09:00:00 America/New_York (" in first and first.endswith(("14:00:00 UTC)", "13:00:00 UTC)"))
    screenshot(browser, "console-job-form-filled")
    browser.find_element(By.ID, "save").click()
    wait_until(lambda: browser.current_url.endswith(f"{COLLECTION}/jobs/nightly"), what="the job's page")

    stored = _stored(site, "nightly")
    action = stored["action"]
    assert action["request"] == {
        "uri": f"{http_target.url}/form",
        "method": "POST",
        "headers": {"X-Test": "1"},
        "body": "from the form",
        "authentication": {"type": "Basic", "username": "robot"},
    }
    assert action["retryPolicy"] == {"retryType": "fixed", "retryInterval": "PT1M", "retryCount": 2}
    assert action["errorAction"]["request"]["uri"] == f"{http_target.url}/failed"
    assert stored["recurrence"] == {
        "frequency": "week",
        "interval": 1,
        "timeZone": "America/New_York",
        "schedule": {"weekDays": ["monday", "wednesday"], "hours": [9], "minutes": [0]},
    }

    browser.get(f"{site}/console/{COLLECTION}/jobs/nightly?action=edit")
    wait_until(lambda: browser.find_element(By.ID, "preview-list"), what="the edit form")
    value = lambda element_id: browser.find_element(By.ID, element_id).get_attribute("value")  # noqa: E731
    assert value("action-uri") == f"{http_target.url}/form" and value("action-header-name-0") == "X-Test"
    assert value("action-retry") == "Fixed" and value("action-retry-interval") == "60"
    assert value("schedule-times") == "09:00" and value("schedule-zone") == "America/New_York"
    assert browser.find_element(By.ID, "day-wednesday").is_selected()
    assert value("action-password") == ""  # write-only: never shown, and kept when left empty
    _choose(browser, "action-retry", "None")
    browser.find_element(By.ID, "save").click()
    wait_until(lambda: browser.current_url.endswith("/jobs/nightly"), what="saved")
    assert _stored(site, "nightly")["action"]["retryPolicy"] == {"retryType": "none"}
    assert requests.post(f"{site}/{COLLECTION}/jobs/nightly/run", params=V, timeout=10).status_code == 200
    sent = wait_until(lambda: [r for r in http_target.requests if r.path == "/form"], timeout=45, what="the run")
    assert sent[0].headers["authorization"] == "Basic " + base64.b64encode(b"robot:pw-secret").decode()
    assert sent[0].headers["x-test"] == "1" and sent[0].body == b"from the form"


def test_the_api_refusal_is_shown_at_the_field_and_the_json_tab_warns(site: str, browser) -> None:
    requests.put(
        f"{site}/{COLLECTION}/jobs/hourly",
        params=V,
        timeout=10,
        json={
            "properties": {
                "recurrence": {"frequency": "Hour", "interval": 1},
                "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
            }
        },
    ).raise_for_status()
    browser.get(f"{site}/console/{COLLECTION}/jobs/hourly?action=edit")
    wait_until(lambda: browser.find_element(By.ID, "preview-list"), what="the edit form")
    _type(browser, "schedule-interval", "0")
    wait_until(
        lambda: "properties.recurrence.interval" in browser.find_element(By.ID, "preview-error").text,
        what="the preview's error",
    )
    browser.find_element(By.ID, "save").click()
    error = wait_until(lambda: browser.find_element(By.ID, "schedule-interval-error"), what="the field's error")
    assert "properties.recurrence.interval" in error.text
    interval = browser.find_element(By.ID, "schedule-interval")
    assert interval.get_attribute("aria-invalid") == "true"
    assert interval.get_attribute("aria-describedby").split()[0] == "schedule-interval-error"
    assert _stored(site, "hourly")["recurrence"]["interval"] == 1  # refused: nothing changed

    browser.find_element(By.ID, "tab-json").click()
    editor = wait_until(lambda: browser.find_element(By.ID, "job-json"), what="the JSON tab")
    assert '"interval": 0' in editor.get_attribute("value")  # the form's document, as JSON
    browser.execute_script(
        "arguments[0].value = arguments[0].value.replace('\"recurrence\"', '\"recurence\"');"
        "arguments[0].dispatchEvent(new Event('input'));",
        editor,
    )
    warned = wait_until(lambda: browser.find_element(By.CSS_SELECTOR, "#job-json-warnings li"), what="the warning")
    assert warned.text == (
        "properties.recurence: not a member of JobProperties: 2016-03-01 ignores it, "
        "the newer api-version refuses it (did you mean 'recurrence'?)"
    )
    screenshot(browser, "console-job-form-json-warning")
    browser.find_element(By.ID, "tab-form").click()  # the JSON's document drives the form again: no recurrence
    kind = wait_until(lambda: browser.find_element(By.ID, "schedule-kind"), what="the form again")
    assert Select(kind).first_selected_option.get_attribute("value") == "once"


def _in_view(browser, element_id: str) -> bool:
    """The element's top is inside the window (not above it, not below its bottom edge)."""
    return browser.execute_script(
        "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
        "return r.top >= 0 && r.top < window.innerHeight && r.bottom > 0;",
        element_id,
    )


def test_the_schedule_preview_stays_in_sight_and_days_go_with_a_weekly_frequency(site: str, browser) -> None:
    set_width(browser, 1366, 768)
    try:
        browser.get(f"{site}/console/{COLLECTION}?action=create")
        wait_until(lambda: browser.find_element(By.ID, "preview-list"), what="the form and its preview")
        assert browser.find_element(By.ID, "day-monday").is_selected()  # the template: Monday and Friday
        for field in ("schedule-frequency", "schedule-times", "schedule-zone", "job-start", "schedule-end"):
            browser.execute_script("document.getElementById(arguments[0]).scrollIntoView({block: 'center'});", field)
            assert _in_view(browser, "schedule-preview"), f"the preview is out of sight while editing {field}"
        screenshot(browser, "console-job-form-preview-beside")

        _choose(browser, "schedule-frequency", "Day")
        wait_until(
            lambda: browser.find_element(By.ID, "preview-words").text == "every day at 09:00 Europe/London",
            what="a daily preview",
        )
        assert not browser.find_elements(By.ID, "day-monday")  # no week days with a daily frequency
        browser.find_element(By.ID, "tab-json").click()
        document = json.loads(browser.find_element(By.ID, "job-json").get_attribute("value"))
        assert document["properties"]["recurrence"]["schedule"] == {"hours": [9], "minutes": [0]}
        assert _in_view(browser, "schedule-preview")  # beside the JSON too
        browser.find_element(By.ID, "tab-form").click()
        _choose(browser, "schedule-frequency", "Week")
        wait_until(lambda: browser.find_elements(By.ID, "day-monday"), what="the week days again")
        assert not browser.find_element(By.ID, "day-monday").is_selected()  # cleared, not kept out of sight

        _type(browser, "schedule-zone", "europe/london")
        error = wait_until(lambda: browser.find_element(By.ID, "preview-error"), what="the preview's error")
        assert "did you mean 'Europe/London'?" in error.text
        assert browser.find_element(By.ID, "schedule-preview").text.splitlines() == ["Next occurrences", error.text]
    finally:
        reset_width(browser)


def test_a_job_saved_with_an_end_already_past_says_it_will_never_run(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}?action=create")
    wait_until(lambda: browser.find_element(By.ID, "preview-list"), what="the form")
    _type(browser, "job-name", "ended")
    _choose(browser, "schedule-end", "until")
    end = wait_until(lambda: browser.find_element(By.ID, "schedule-end-time"), what="the end's field")
    browser.execute_script(
        "arguments[0].value = '2020-01-01T12:00'; arguments[0].dispatchEvent(new Event('input'));", end
    )
    browser.find_element(By.ID, "save").click()
    warning = wait_until(lambda: browser.find_element(By.ID, "save-warning"), what="the save's warning")
    assert warning.text.splitlines()[0] == (
        "Saved (state completed), but its end, 2020-01-01 12:00:00 Europe/London (12:00:00 UTC), is in the past, "
        "so the job will never run. Set a later end, or none, to run it."
    )
    assert browser.current_url.endswith("?action=create")  # the page stays, the message in sight
    assert _stored(site, "ended")["state"] == "completed"
