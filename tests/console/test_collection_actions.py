"""The console's collection actions in a real headless Chromium against the real function_app.py under the
local host: create (the API's validation error next to its field, nothing stored; a taken name refused rather
than replaced), disable and enable (cascading to the jobs, as the API does), delete after a confirmation."""

from __future__ import annotations

import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from .browser import screenshot, wait_until
from .conftest import V

SUB, RG, JC = "actions-sub", "ops-rg", "nightly"
COLLECTION = f"subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{JC}"
OWN_SUB = f"{SUB}-own"  # the delete test's own collection, so each test finds the subscription it expects
OWN = f"subscriptions/{OWN_SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{JC}"


def _main(browser) -> str:
    return browser.find_element(By.TAG_NAME, "main").text


def _fill(browser, **values: str) -> None:
    for name, value in values.items():
        field = browser.find_element(By.ID, f"collection-{name}")
        field.clear()
        field.send_keys(value)


def test_create_shows_the_api_error_at_its_field_then_creates(host_url: str, browser) -> None:
    browser.get(f"{host_url}/console?subscription={SUB}")
    wait_until(lambda: "0 collections" in _main(browser), what="the empty list")
    browser.find_element(By.ID, "new-collection").click()
    wait_until(lambda: browser.find_element(By.ID, "collection-group"), what="the form")
    assert browser.switch_to.active_element.get_attribute("id") == "collection-group"
    _fill(browser, group=RG, name=JC, location="westeurope", **{"max-jobs": "0"})
    Select(browser.find_element(By.ID, "collection-sku")).select_by_visible_text("Standard")
    browser.find_element(By.ID, "create-collection").click()
    note = wait_until(
        lambda: browser.find_element(By.CSS_SELECTOR, "#collection-max-jobs-error:not([hidden])"),
        what="the error at maxJobCount",
    )
    assert "properties.quota.maxJobCount" in note.text
    field = browser.find_element(By.ID, "collection-max-jobs")
    assert field.get_attribute("aria-invalid") == "true"
    assert "collection-max-jobs-error" in field.get_attribute("aria-describedby")
    screenshot(browser, "console-collection-form-error")
    assert requests.get(f"{host_url}/{COLLECTION}", params=V, timeout=10).status_code == 404

    _fill(browser, **{"max-jobs": "10"})
    browser.find_element(By.ID, "create-collection").click()
    wait_until(
        lambda: browser.current_url.split("?")[0] == f"{host_url}/console/{COLLECTION}",
        what="the new collection's page",
    )
    stored = requests.get(f"{host_url}/{COLLECTION}", params=V, timeout=10).json()
    assert stored["location"] == "West Europe" and stored["properties"]["quota"]["maxJobCount"] == 10
    assert stored["properties"]["sku"]["name"] == "Standard"

    # The same name again is refused at the name field, and the stored collection is left as it was.
    browser.get(f"{host_url}/console?subscription={SUB}&action=create")
    wait_until(lambda: browser.find_element(By.ID, "collection-group"), what="the form")
    _fill(browser, group=RG, name=JC, location="northeurope")
    browser.find_element(By.ID, "create-collection").click()
    note = wait_until(
        lambda: browser.find_element(By.CSS_SELECTOR, "#collection-name-error:not([hidden])"), what="the taken name"
    )
    assert "already exists" in note.text
    assert requests.get(f"{host_url}/{COLLECTION}", params=V, timeout=10).json()["location"] == "West Europe"


def test_disable_enable_and_delete_with_confirmation(host_url: str, browser) -> None:
    # A collection of its own: the test that creates one through the form may run on another worker, or after it.
    made = requests.put(f"{host_url}/{OWN}", params=V, timeout=10, json={"location": "West Europe", "properties": {}})
    assert made.status_code in (200, 201), made.text
    job = requests.put(
        f"{host_url}/{OWN}/jobs/tick",
        params=V,
        timeout=10,
        json={
            "properties": {
                "recurrence": {"frequency": "Hour"},
                "action": {"type": "Http", "request": {"uri": f"{host_url}/openapi.json", "method": "GET"}},
            }
        },
    )
    assert job.status_code in (200, 201), job.text
    browser.get(f"{host_url}/console/{OWN}")
    wait_until(lambda: "tick" in _main(browser), what="the collection's jobs")
    assert not browser.find_element(By.ID, "enable-collection").is_enabled()
    browser.find_element(By.ID, "disable-collection").click()
    wait_until(lambda: browser.find_element(By.ID, "enable-collection").is_enabled(), what="disabled")
    assert browser.find_element(By.ID, "status").text == "Collection disabled."

    def job_state() -> str:
        answer = requests.get(f"{host_url}/{OWN}/jobs/tick", params=V, timeout=10)
        return str(answer.json()["properties"]["state"])

    # The collection's state reaches its jobs soon after the answer (the host's dispatch trigger).
    wait_until(lambda: job_state() == "disabled", timeout=30, what="the job disabled")
    browser.find_element(By.ID, "enable-collection").click()
    wait_until(lambda: browser.find_element(By.ID, "disable-collection").is_enabled(), what="enabled")
    stored = requests.get(f"{host_url}/{OWN}", params=V, timeout=10).json()
    assert stored["properties"]["state"] == "Enabled"

    browser.find_element(By.ID, "delete-collection").click()
    wait_until(lambda: browser.find_element(By.ID, "confirm-ok").is_displayed(), what="the confirmation")
    assert "its 1 job" in browser.find_element(By.ID, "confirm-text").text
    assert browser.switch_to.active_element.get_attribute("id") == "confirm-cancel"
    screenshot(browser, "console-collection-delete")
    browser.find_element(By.ID, "confirm-cancel").click()
    wait_until(lambda: browser.find_element(By.ID, "status").text == "Delete cancelled.", what="cancelled")
    assert requests.get(f"{host_url}/{OWN}", params=V, timeout=10).status_code == 200
    browser.find_element(By.ID, "delete-collection").click()
    wait_until(lambda: browser.find_element(By.ID, "confirm-ok").is_displayed(), what="the confirmation again")
    browser.find_element(By.ID, "confirm-ok").click()
    wait_until(
        lambda: browser.current_url == f"{host_url}/console?subscription={OWN_SUB}",
        timeout=30,
        what="back on the subscription",
    )
    wait_until(lambda: "0 collections" in _main(browser), what="the emptied list")
    assert requests.get(f"{host_url}/{OWN}", params=V, timeout=10).status_code == 404
