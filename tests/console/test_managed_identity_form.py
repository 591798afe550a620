"""The job form offers the app's managed identity as an Http action's authentication: an audience and an optional
client id, no secret field; what another type left behind (a tenant, a secret) is dropped when it is chosen, so the
API, which refuses those for a managed identity, takes the job. Real headless Chromium, real function_app.py."""

from __future__ import annotations

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.select import Select

from shared.model.versions import NEWEST

from .browser import wait_until
from .conftest import V

COLLECTION = "subscriptions/mi-sub/resourceGroups/mi-rg/providers/Microsoft.Scheduler/jobCollections/identities"


@pytest.fixture(scope="module")
def site(host_url: str) -> str:
    answer = requests.put(f"{host_url}/{COLLECTION}", params=V, timeout=10, json={"location": "westeurope"})
    assert answer.status_code in (200, 201), answer.text
    return host_url


def _type(browser, element_id: str, text: str) -> None:
    element = wait_until(lambda: browser.find_element(By.ID, element_id), what=element_id)
    element.clear()
    element.send_keys(text)


def test_a_job_authenticates_with_the_apps_managed_identity(site: str, browser) -> None:
    browser.get(f"{site}/console/{COLLECTION}?action=create")
    wait_until(lambda: browser.find_element(By.ID, "preview-list"), what="the form")
    _type(browser, "job-name", "with-identity")
    _type(browser, "action-uri", "https://hooks.example.com/run")
    auth = Select(browser.find_element(By.ID, "action-auth"))
    auth.select_by_value("ActiveDirectoryOAuth")
    _type(browser, "action-tenant", "contoso.onmicrosoft.com")
    _type(browser, "action-secret", "left-behind")
    Select(browser.find_element(By.ID, "action-auth")).select_by_value("ManagedIdentity")
    _type(browser, "action-audience", "api://target")
    assert browser.find_elements(By.ID, "action-secret") == [] and browser.find_elements(By.ID, "action-tenant") == []
    _type(browser, "action-client-id", "11111111-2222-3333-4444-555555555555")
    browser.find_element(By.ID, "save").click()
    wait_until(lambda: browser.current_url.endswith(f"{COLLECTION}/jobs/with-identity"), what="the job's page")

    answer = requests.get(f"{site}/{COLLECTION}/jobs/with-identity", params={"api-version": NEWEST.name}, timeout=10)
    assert answer.json()["properties"]["action"]["request"]["authentication"] == {
        "type": "ManagedIdentity",
        "audience": "api://target",
        "clientId": "11111111-2222-3333-4444-555555555555",
    }
