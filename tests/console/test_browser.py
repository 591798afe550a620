"""The console in a real headless Chromium against the real function_app.py under the local host: it loads,
lists a job created through the API (the state filter applied by a button, not while arrowing through it),
runs it now and shows the new history entry with its lateness, then the job's last run and outcome in the
list; pages through more jobs than a page holds; says which secrets are set without ever showing one; the
editor shows the API's validation error next to the property it names; delete asks first. Screenshots go to
.local/screenshots (their paths are printed)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .browser import screenshot, wait_until
from .conftest import V

SUB, RG, JC = "console-sub", "console-rg", "console-jc"
COLLECTION = f"subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{JC}"


@pytest.fixture(scope="module")
def site(host_url: str) -> str:
    created = requests.put(
        f"{host_url}/{COLLECTION}",
        params=V,
        timeout=10,
        json={"location": "westeurope", "properties": {"sku": {"name": "Standard"}, "quota": {"maxJobCount": 20}}},
    )
    assert created.status_code in (200, 201), created.text
    start = (datetime.now(UTC) + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)
    job = requests.put(
        f"{host_url}/{COLLECTION}/jobs/ping",
        params=V,
        timeout=10,
        json={
            "properties": {
                "startTime": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "recurrence": {
                    "frequency": "Week",
                    "schedule": {"weekDays": ["Monday", "Friday"], "hours": [9], "minutes": [0]},
                    "timeZone": "Europe/London",
                },
                # The host itself is the target: a real local server that answers 200.
                "action": {"type": "Http", "request": {"uri": f"{host_url}/openapi.json", "method": "GET"}},
            }
        },
    )
    assert job.status_code in (200, 201), job.text
    return host_url


def _text(browser) -> str:
    return browser.find_element(By.TAG_NAME, "main").text


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _cell(table, column: str, row: int = 0) -> str:
    """The text under a column heading in the table's `row`th body row (its first cell is a row header)."""
    head = [th.text for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    cells = table.find_elements(By.CSS_SELECTOR, "tbody tr")[row].find_elements(By.CSS_SELECTOR, "th, td")
    return cells[head.index(column)].text


def test_collections_page_shows_quota_and_counts(site: str, browser) -> None:
    browser.get(f"{site}/console?subscription={SUB}")
    wait_until(lambda: JC in _text(browser) and "1 / 20" in _text(browser), what="the collections table")
    row = browser.find_element(By.XPATH, f"//tr[th//a[text()='{JC}']]")
    cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
    assert cells[:5] == [RG, "West Europe", "Enabled", "Standard", "1 / 20"]
    assert cells[5:] == ["1", "0", "0", "0"]  # enabled, disabled, faulted, completed
    screenshot(browser, "console-collections")


def test_jobs_page_lists_the_job_with_its_schedule_in_words(site: str, browser) -> None:
    browser.get(f"{site}/console?subscription={SUB}")
    link = wait_until(lambda: browser.find_element(By.LINK_TEXT, JC), what="the collection link")
    link.send_keys(Keys.ENTER)  # keyboard navigation
    wait_until(lambda: "ping" in _text(browser) and "Europe/London" in _text(browser), what="the jobs table")
    assert browser.current_url.split("?")[0] == f"{site}/console/{COLLECTION}"
    assert "every Monday and Friday at 09:00 Europe/London" in _text(browser)
    assert "null" not in _text(browser).split()  # an absent note under the table is nothing, not "null"
    select = browser.find_element(By.ID, "state-filter")
    assert browser.find_element(By.CSS_SELECTOR, "label[for='state-filter']").text == "Filter by state"
    assert browser.find_element(By.ID, "state-filter-form").get_attribute("aria-label") == "Filter jobs"
    # Arrowing through the closed list changes its value at every key: that alone must not navigate.
    browser.execute_script("navigation.addEventListener('navigate', () => { window.navigated = true; });")
    select.send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN)
    assert select.get_attribute("value") == "Disabled"
    assert not browser.execute_script("return window.navigated") and "state=" not in browser.current_url
    screenshot(browser, "console-jobs")
    browser.find_element(By.ID, "apply-filter").send_keys(Keys.ENTER)
    wait_until(lambda: browser.current_url.endswith(f"{COLLECTION}?state=Disabled"), what="the filtered page")
    wait_until(lambda: "None." in _text(browser), what="an empty filtered list")
    assert browser.find_element(By.ID, "state-filter").get_attribute("value") == "Disabled"


def test_job_page_runs_now_and_shows_the_new_history_entry(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}/jobs/ping")
    wait_until(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#occurrences li")) == 10, what="10 occurrences")
    assert "No runs yet." in _text(browser)
    first = browser.find_elements(By.CSS_SELECTOR, "#occurrences li")[0].text
    # In the job's zone with UTC beside: 09:00 in London is 08:00 UTC in summer, 09:00 in winter.
    assert " 09:00:00 Europe/London (" in first and first.endswith(("09:00:00 UTC)", "08:00:00 UTC)"))
    run = browser.find_element(By.ID, "run-now")
    assert run.get_attribute("type") == "button" and run.text == "Run now"
    run.send_keys(Keys.ENTER)
    wait_until(
        lambda: (
            browser.find_elements(By.CSS_SELECTOR, "#history-table tbody tr th")
            and "Completed" in browser.find_element(By.ID, "history-table").text
        ),
        timeout=45,
        what="the run's history entry",
    )
    history = requests.get(f"{site}/{COLLECTION}/jobs/ping/history", params=V, timeout=10).json()["value"]
    assert [h["properties"]["status"] for h in history] == ["Completed"]
    entry = history[0]["properties"]
    late = (_instant(entry["startTime"]) - _instant(entry["expectedExecutionTime"])).total_seconds()
    lateness = _cell(browser.find_element(By.ID, "history-table"), "Lateness")
    assert lateness.endswith(" s") and abs(float(lateness[:-2]) - late) < 0.051, (lateness, late)
    chart = browser.find_element(By.CSS_SELECTOR, "#history svg[role='img']")
    summary = chart.find_element(By.TAG_NAME, "desc").get_attribute("textContent")
    assert "1 attempt of 1 occurrence: 1 succeeded" in summary
    assert browser.find_element(By.ID, "status").text.startswith("New history entry: Completed")
    screenshot(browser, "console-job")


def test_jobs_page_shows_the_last_run_and_its_outcome(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}")
    table = wait_until(lambda: browser.find_element(By.XPATH, "//table[.//a[text()='ping']]"), what="the jobs")
    status = requests.get(f"{site}/{COLLECTION}/jobs/ping", params=V, timeout=10).json()["properties"]["status"]
    at = _instant(status["lastExecutionTime"])
    london = at.astimezone(ZoneInfo("Europe/London"))
    utc = f"{at:%H:%M:%S}" if london.date() == at.date() else f"{at:%Y-%m-%d %H:%M:%S}"
    last = f"{london:%Y-%m-%d %H:%M:%S} Europe/London ({utc} UTC)"  # the job's zone, UTC beside
    assert _cell(table, "Last run (outcome)") == f"{last} (Completed)"
    assert _cell(table, "Runs") == "1" and _cell(table, "Failures") == "0"


def test_editor_shows_the_api_error_at_the_property_and_stores_nothing(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}?action=create")
    name = wait_until(lambda: browser.find_element(By.ID, "job-name"), what="the editor")
    name.send_keys("broken")
    browser.find_element(By.ID, "tab-json").click()  # the JSON is the form's advanced tab
    editor = wait_until(lambda: browser.find_element(By.ID, "job-json"), what="the JSON tab")
    browser.execute_script(
        "arguments[0].value = arguments[1];",
        editor,
        '{"properties": {\n "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", '
        '"method": "GET"}},\n "recurrence": {\n  "frequency": "Hour",\n  "interval": 0\n }\n}}',
    )
    browser.find_element(By.ID, "save").click()
    error = wait_until(lambda: browser.find_element(By.ID, "job-json-error"), what="the field error")
    assert "properties.recurrence.interval" in error.text and "(line 5)" in error.text
    assert editor.get_attribute("aria-invalid") == "true"
    assert editor.get_attribute("aria-describedby").split()[0] == "job-json-error"
    selected = browser.execute_script(
        "const t = arguments[0]; return t.value.slice(t.selectionStart, t.selectionEnd);", editor
    )
    assert selected.startswith('"interval"')
    screenshot(browser, "console-editor-error")
    assert requests.get(f"{site}/{COLLECTION}/jobs/broken", params=V, timeout=10).status_code == 404


def test_disable_then_delete_asks_first(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}/jobs/ping")
    wait_until(lambda: browser.find_element(By.ID, "disable").is_enabled(), what="the job page")
    browser.find_element(By.ID, "disable").click()
    wait_until(lambda: "Disabled" in browser.find_element(By.CSS_SELECTOR, "dl.props dd").text, what="disabled")
    browser.find_element(By.ID, "delete").click()
    dialog = wait_until(lambda: browser.find_element(By.ID, "confirm"), what="the dialog")
    assert dialog.get_attribute("open") is not None
    assert browser.switch_to.active_element.get_attribute("id") == "confirm-cancel"
    browser.switch_to.active_element.send_keys(Keys.ENTER)  # Cancel
    wait_until(lambda: browser.find_element(By.ID, "status").text == "Delete cancelled.", what="cancel")
    assert requests.get(f"{site}/{COLLECTION}/jobs/ping", params=V, timeout=10).status_code == 200
    browser.find_element(By.ID, "delete").click()
    wait_until(lambda: browser.find_element(By.ID, "confirm-ok").is_displayed(), what="the dialog again")
    browser.find_element(By.ID, "confirm-ok").click()
    wait_until(lambda: browser.current_url.rstrip("/").endswith(JC), what="back on the collection")
    assert requests.get(f"{site}/{COLLECTION}/jobs/ping", params=V, timeout=10).status_code == 404


PAGED = f"subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/paged"


def _put(url: str, body: dict) -> None:
    answer = requests.put(url, params=V, json=body, timeout=10)
    assert answer.status_code in (200, 201), answer.text


def _http_job(host_url: str, **action: object) -> dict:
    start = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:00:00Z")
    return {
        "properties": {
            "startTime": start,
            "recurrence": {"frequency": "Month", "interval": 1},
            "action": {"type": "Http", "request": {"uri": f"{host_url}/openapi.json", "method": "GET"}, **action},
        }
    }


def test_jobs_page_pages_through_more_jobs_than_a_page(site: str, browser) -> None:
    _put(f"{site}/{PAGED}", {"location": "westeurope", "properties": {"quota": {"maxJobCount": 30}}})
    with ThreadPoolExecutor(4) as pool:  # one page is 25 jobs: 26 make a second page
        list(pool.map(lambda i: _put(f"{site}/{PAGED}/jobs/job-{i:02}", _http_job(site)), range(26)))
    browser.get(f"{site}/console/{PAGED}")
    rows = "table tbody tr th a"
    wait_until(lambda: len(browser.find_elements(By.CSS_SELECTOR, rows)) == 25, what="the first page")
    assert not browser.find_elements(By.CSS_SELECTOR, "a[rel='prev']")
    browser.find_element(By.CSS_SELECTOR, "nav[aria-label='Pages'] a[rel='next']").send_keys(Keys.ENTER)
    wait_until(lambda: browser.current_url.endswith(f"{PAGED}?page=1"), what="the second page's address")
    second = wait_until(lambda: [a.text for a in browser.find_elements(By.CSS_SELECTOR, rows)], what="page 2")
    assert len(second) == 1 and "Page 2" in _text(browser)
    assert not browser.find_elements(By.CSS_SELECTOR, "a[rel='next']")
    browser.find_element(By.CSS_SELECTOR, "a[rel='prev']").send_keys(Keys.ENTER)
    wait_until(lambda: browser.current_url.endswith(PAGED), what="back on the first page")
    first = wait_until(lambda: [a.text for a in browser.find_elements(By.CSS_SELECTOR, rows)], what="page 1")
    assert len(first) == 25 and not set(first) & set(second)
    assert sorted(first + second) == [f"job-{i:02}" for i in range(26)]


SECRETS = {
    "password": "pw-9f3a-do-not-show",
    "sasToken": "sv=2024&sig=tok-5e1b-do-not-show",
    "sasKey": "key-77c2-do-not-show",
}


def test_job_page_says_which_secrets_are_set_and_never_shows_one(site: str, browser) -> None:
    basic = _http_job(
        site,
        errorAction={
            "type": "ServiceBusQueue",
            "serviceBusQueueMessage": {"namespace": "ns", "queueName": "errors", "message": "failed"},
        },
    )
    basic["properties"]["action"]["request"]["authentication"] = {
        "type": "Basic",
        "username": "robot",
        "password": SECRETS["password"],
    }
    queue = _http_job(site)
    queue["properties"]["action"] = {
        "type": "StorageQueue",
        "queueMessage": {"storageAccount": "acct", "queueName": "q", "message": "hi", "sasToken": SECRETS["sasToken"]},
        "errorAction": {
            "type": "ServiceBusTopic",
            "serviceBusTopicMessage": {
                "namespace": "ns",
                "topicPath": "t",
                "authentication": {
                    "type": "SharedAccessKey",
                    "sasKeyName": "RootManageSharedAccessKey",
                    "sasKey": SECRETS["sasKey"],
                },
            },
        },
    }
    unknown = "unknown: write-only and optional, so the API does not say"
    for name, body, shown, expected in (
        (
            "basic-auth",
            basic,
            '"username": "robot"',
            [
                ["properties.action.request.authentication.password", "set"],
                [
                    "properties.action.errorAction.serviceBusQueueMessage.authentication.sasKey",
                    "not set (no authentication)",
                ],
            ],
        ),
        (
            "queue-sas",
            queue,
            '"sasKeyName": "RootManageSharedAccessKey"',
            [
                ["properties.action.queueMessage.sasToken", unknown],
                ["properties.action.errorAction.serviceBusTopicMessage.authentication.sasKey", unknown],
            ],
        ),
    ):
        _put(f"{site}/{COLLECTION}/jobs/{name}", body)
        browser.get(f"{site}/console/{COLLECTION}/jobs/{name}")
        table = wait_until(
            lambda: browser.find_element(By.XPATH, "//table[caption[starts-with(., 'Secrets')]]"),
            what="the secrets table",
        )
        rows = [
            [c.text for c in row.find_elements(By.CSS_SELECTOR, "th, td")]
            for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")
        ]
        assert rows == expected, name
        assert shown in browser.find_element(By.CSS_SELECTOR, "pre.json").text  # the definition, without secrets
        page = browser.page_source
        assert not [secret for secret in SECRETS.values() if secret in page], name
    browser.execute_script("arguments[0].scrollIntoView();", table)
    screenshot(browser, "console-job-secrets")
