"""The console shows and sets a job's success expectation and missed-run policy, refuses a new job's name already
taken (as `scheduler jobs create` does), and says a collection's limits and kept history in the words
`scheduler collections show` prints: in a real headless Chromium against the real function_app.py under the
local host."""

from __future__ import annotations

import re

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.select import Select

from shared.model.versions import NEWEST
from tests.cli.conftest import Cli

from .browser import wait_until

SUB, RG, JC = "expect-sub", "expect-rg", "expect-jc"
COLLECTION = f"subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{JC}"
NEW = {"api-version": NEWEST.name}


def _job(uri: str) -> dict:
    return {
        "properties": {
            "action": {"type": "Http", "request": {"uri": uri, "method": "POST"}},
            "recurrence": {"frequency": "Hour", "interval": 1},
        }
    }


@pytest.fixture(scope="module")
def site(host_url: str) -> str:
    made = requests.put(
        f"{host_url}/{COLLECTION}",
        params=NEW,
        timeout=10,
        json={
            "location": "westeurope",
            "properties": {
                "sku": {"name": "Free"},
                "historyRetention": {"maxAge": "P7D", "failureMaxAge": "P30D"},
            },
        },
    )
    assert made.status_code in (200, 201), made.text
    for name in ("watched", "taken"):
        job = requests.put(
            f"{host_url}/{COLLECTION}/jobs/{name}", params=NEW, timeout=10, json=_job(f"http://127.0.0.1:9/{name}")
        )
        assert job.status_code in (200, 201), job.text
    return host_url


def _stored(site: str, name: str) -> dict:
    return requests.get(f"{site}/{COLLECTION}/jobs/{name}", params=NEW, timeout=10).json()["properties"]


def _save(browser, site: str, name: str) -> None:
    browser.find_element(By.ID, "save").click()
    wait_until(lambda: browser.current_url.endswith(f"{COLLECTION}/jobs/{name}"), what="the job's page")


def test_the_form_sets_the_expectation_and_missed_run_policy_and_the_job_page_shows_them(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}/jobs/watched")
    shown = wait_until(lambda: browser.find_element(By.ID, "expect-success-within"), timeout=45, what="the job page")
    assert shown.text == "— (no expectation)"
    assert browser.find_element(By.ID, "missed-run-policy").text.startswith("Latest (default)")

    browser.get(f"{site}/console/{COLLECTION}/jobs/watched?action=edit")
    expect = wait_until(lambda: browser.find_element(By.ID, "job-expect"), what="the expectation field")
    expect.send_keys("PT2M")
    Select(browser.find_element(By.ID, "job-missed")).select_by_value("All")
    wait_until(lambda: browser.find_element(By.ID, "job-missed-window"), what="All's window").send_keys("P2D")
    browser.find_element(By.ID, "job-missed-max").send_keys("5")
    _save(browser, site, "watched")
    stored = _stored(site, "watched")
    assert stored["expectSuccessWithin"] == "PT2M"
    policy = stored["missedRunPolicy"]
    assert (policy["type"].lower(), policy["window"], policy["maxRuns"]) == ("all", "P2D", 5)
    page = wait_until(lambda: browser.find_element(By.ID, "missed-run-policy"), what="the job page")
    assert page.text == "All: the latest 5 missed occurrences of the last P2D run, oldest first"
    assert browser.find_element(By.ID, "expect-success-within").text.startswith("PT2M: longer without a success")

    browser.get(f"{site}/console/{COLLECTION}/jobs/watched?action=edit")
    missed = wait_until(lambda: browser.find_element(By.ID, "job-missed"), what="the edit form")
    assert Select(missed).first_selected_option.get_attribute("value") == "All"
    Select(missed).select_by_value("Skip")  # window and maxRuns are All's: they go with it
    browser.find_element(By.ID, "job-expect").send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)  # clear() sends no input
    _save(browser, site, "watched")
    stored = _stored(site, "watched")
    assert "expectSuccessWithin" not in stored
    assert {k: str(v).lower() for k, v in stored["missedRunPolicy"].items()} == {"type": "skip"}


def test_a_new_jobs_taken_name_is_refused_at_the_name_and_the_job_is_kept(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}?action=create")
    name = wait_until(lambda: browser.find_element(By.ID, "job-name"), what="the new job form")
    name.send_keys("taken")
    uri = browser.find_element(By.ID, "action-uri")
    uri.clear()
    uri.send_keys("http://127.0.0.1:9/other")
    browser.find_element(By.ID, "save").click()
    error = wait_until(lambda: browser.find_element(By.ID, "job-name-error"), what="the refusal at the name")
    assert error.text == f"Conflict: name: a job 'taken' already exists in {JC}."
    assert _stored(site, "taken")["action"]["request"]["uri"] == "http://127.0.0.1:9/taken"


def test_the_collection_page_and_the_cli_say_the_same_limits_and_kept_history(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}")
    kept = wait_until(lambda: browser.find_element(By.ID, "history-kept"), what="the collection's limits")
    wait_until(lambda: kept.text != "?", what="the limits' words")
    assert kept.text == "the newest 1000 entries per job, none older than 7 days (failed ones: 30 days)"
    words = [browser.find_element(By.ID, i).text for i in ("max-jobs", "min-interval")]
    assert words == ["2 of at most 5 (the Free plan)", "at most once every 1 hour"]
    shown = Cli(site, SUB)("collections", "show", "-g", RG, "-c", JC)
    assert shown.exit_code == 0, shown.stderr
    flat = re.sub(r"\s+", " ", shown.stdout)
    assert all(f" {w} " in flat for w in (kept.text, *words)), flat
