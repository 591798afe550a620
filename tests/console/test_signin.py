"""Signing in to the console with Entra ID, in a real headless Chromium, against the real function_app.py in
`entra` mode and a local token issuer on loopback (tests/support/identity.py) that plays the tenant's
authorize, token and logout endpoints and checks the PKCE verifier. The user holds Reader on one collection
only: the console signs in, lists that collection, shows the API's 403 properly for the other one and for a
write, signs in again when the token expires, refuses a forged answer, and signs out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import jwt
import pytest
import requests
from selenium.webdriver.common.by import By

from tests.support.identity import AUDIENCE, LocalIssuer, local_issuer, new_id
from tests.support.local_host import local_host

from .browser import screenshot, wait_until
from .conftest import V

SUB = "5e1f0000-1bf0-4dda-aec3-111122223333"
RG = "signin-rg"
READABLE, HIDDEN = "readable-jc", "hidden-jc"
OWNER, READER = new_id(), new_id()
READER_ROLE = "acdd72a7-3385-48ef-bd42-f606fba81ae7"
UPN = "reader@contoso.example"


def collection(name: str) -> str:
    return f"subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{name}"


@pytest.fixture(scope="module")
def issuer() -> Iterator[LocalIssuer]:
    with local_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def site(azurite, issuer: LocalIssuer) -> Iterator[str]:
    with local_host(azurite, **issuer.environment(OWNER), SCHEDULER_CONSOLE_CLIENT_ID=issuer.client_id) as base:
        issuer.redirect_uris.add(f"{base}/console")  # the SPA redirect URI of the app registration
        issuer.signed_in, issuer.signed_in_upn = READER, UPN
        owner = {"Authorization": f"Bearer {issuer.token(OWNER)}"}
        for name in (READABLE, HIDDEN):
            made = requests.put(
                f"{base}/{collection(name)}",
                params=V,
                headers=owner,
                timeout=30,
                json={"location": "westeurope", "properties": {"sku": {"name": "Standard"}}},
            )
            assert made.status_code in (200, 201), made.text
        start = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        action = {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}}
        job = requests.put(
            f"{base}/{collection(READABLE)}/jobs/nightly",
            params=V,
            headers=owner,
            timeout=30,
            json={"properties": {"startTime": start, "recurrence": {"frequency": "Day"}, "action": action}},
        )
        assert job.status_code in (200, 201), job.text
        assigned = requests.put(
            f"{base}/{collection(READABLE)}/providers/Microsoft.Authorization/roleAssignments/{new_id()}",
            params={"api-version": "2022-04-01"},
            headers=owner,
            timeout=30,
            json={
                "properties": {
                    "roleDefinitionId": f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/"
                    f"{READER_ROLE}",
                    "principalId": READER,
                }
            },
        )
        assert assigned.status_code == 201, assigned.text
        yield base


def _main(browser) -> str:
    return browser.find_element(By.TAG_NAME, "main").text


def _stored(browser) -> dict | None:
    return json.loads(browser.execute_script("return sessionStorage.getItem('scheduler.session') || 'null'"))


def _edit_session(browser, change: str) -> None:
    browser.execute_script(
        "const s = JSON.parse(sessionStorage.getItem('scheduler.session'));"
        f"{change} sessionStorage.setItem('scheduler.session', JSON.stringify(s));"
    )


def _signed_in(site: str, browser) -> None:
    """The browser signed in as the reader: by an earlier test of this module on the same worker, else here (xdist
    may hand a later test of the module to a worker whose browser never signed in to this site)."""
    browser.get(f"{site}/console?subscription={SUB}")
    wait_until(lambda: READABLE in _main(browser) or "SignInRequired" in _main(browser), what="the console")
    if READABLE not in _main(browser):
        browser.find_element(By.ID, "sign-in").click()
        wait_until(lambda: READABLE in _main(browser), timeout=30, what="the collections after signing in")


def _authorizations(issuer: LocalIssuer) -> int:
    return sum(1 for path in issuer.requests if "/oauth2/v2.0/authorize" in path)


def test_signs_in_with_pkce_and_lists_only_what_the_user_may_read(site: str, issuer: LocalIssuer, browser) -> None:
    browser.get(f"{site}/console?subscription={SUB}")
    wait_until(lambda: "SignInRequired" in _main(browser), what="the sign-in prompt")
    assert browser.find_element(By.CSS_SELECTOR, "main .error button").text == "Sign in"
    assert not browser.find_elements(By.CSS_SELECTOR, "#credentials:not([hidden])")  # no token to paste
    screenshot(browser, "console-signin-required")

    browser.find_element(By.ID, "sign-in").click()
    wait_until(lambda: READABLE in _main(browser), timeout=30, what="the collections after signing in")
    assert browser.find_element(By.ID, "signed-in-as").text == f"Signed in as {UPN}"
    assert HIDDEN not in _main(browser) and "1 collection" in _main(browser)
    assert browser.current_url == f"{site}/console?subscription={SUB}"  # the code left the address bar
    assert issuer.refused == []  # the token endpoint checked the PKCE verifier against the challenge
    (grant,) = issuer.redeemed
    assert grant["redirect_uri"] == f"{site}/console" and f"{AUDIENCE}/.default" in grant["requested"].split()
    stored = _stored(browser)
    assert stored is not None and stored["user"] == UPN
    assert jwt.decode(stored["accessToken"], options={"verify_signature": False})["aud"] == AUDIENCE
    assert browser.execute_script("return localStorage.length") == 0
    screenshot(browser, "console-signed-in")


def test_what_the_user_may_not_do_is_shown_as_authorization_failed(site: str, issuer: LocalIssuer, browser) -> None:
    _signed_in(site, browser)
    browser.get(f"{site}/console/{collection(HIDDEN)}")
    alert = wait_until(lambda: browser.find_element(By.CSS_SELECTOR, "main [role='alert']"), what="the 403")
    assert "AuthorizationFailed (403)" in alert.text and f"over scope '/{collection(HIDDEN)}'" in alert.text
    assert f"You are signed in as {UPN}" in alert.text and "Reader to see" in alert.text
    screenshot(browser, "console-forbidden")

    browser.get(f"{site}/console/{collection(READABLE)}/jobs/nightly")
    wait_until(lambda: browser.find_element(By.ID, "disable").is_enabled(), what="the job page")
    browser.find_element(By.ID, "disable").click()
    result = wait_until(
        lambda: browser.find_element(By.CSS_SELECTOR, "#action-result [role='alert']"), what="the refused write"
    )
    assert "AuthorizationFailed (403)" in result.text and "jobs/write" in result.text
    owner = {"Authorization": f"Bearer {issuer.token(OWNER)}"}
    stored = requests.get(f"{site}/{collection(READABLE)}/jobs/nightly", params=V, headers=owner, timeout=30)
    assert stored.json()["properties"]["state"] == "enabled"


def test_an_expired_sign_in_signs_in_again_and_comes_back(site: str, issuer: LocalIssuer, browser) -> None:
    _signed_in(site, browser)
    page = f"{site}/console/{collection(READABLE)}/jobs/nightly"
    browser.get(page)
    wait_until(lambda: "every day" in _main(browser), what="the job page")
    before = _authorizations(issuer)
    _edit_session(browser, "s.expiresAt = Date.now() - 1000;")
    browser.refresh()
    wait_until(
        lambda: _authorizations(issuer) == before + 1 and browser.current_url == page and "every day" in _main(browser),
        timeout=30,
        what="the page again after signing in again",
    )
    assert _stored(browser)["expiresAt"] > datetime.now(UTC).timestamp() * 1000


def test_refused_and_forged_answers_ask_to_sign_in_again(site: str, issuer: LocalIssuer, browser) -> None:
    _signed_in(site, browser)
    tokens_before = sum(1 for path in issuer.requests if path.endswith("/token"))
    browser.get(f"{site}/console?code=stolen-code&state=forged")
    alert = wait_until(lambda: browser.find_element(By.CSS_SELECTOR, "main [role='alert']"), what="the refusal")
    assert "does not belong to a sign-in started in this tab" in alert.text
    assert "code=" not in browser.current_url
    assert sum(1 for path in issuer.requests if path.endswith("/token")) == tokens_before  # nothing redeemed

    # A token the API refuses (here: not signed by the tenant) is dropped, and the page offers a new sign-in.
    _edit_session(browser, "s.accessToken = 'e30.e30.forged';")
    browser.get(f"{site}/console?subscription={SUB}")
    alert = wait_until(lambda: browser.find_element(By.CSS_SELECTOR, "main [role='alert']"), what="the 401")
    assert "InvalidAuthenticationToken (401)" in alert.text
    assert alert.find_element(By.TAG_NAME, "button").text == "Sign in again"
    assert _stored(browser) is None
    alert.find_element(By.TAG_NAME, "button").click()
    wait_until(lambda: READABLE in _main(browser), timeout=30, what="signed in again")


def test_sign_out_forgets_the_token(site: str, issuer: LocalIssuer, browser) -> None:
    _signed_in(site, browser)
    browser.find_element(By.ID, "sign-out").click()
    wait_until(
        lambda: (
            any("/oauth2/v2.0/logout" in path for path in issuer.requests)
            and browser.current_url.rstrip("/") == f"{site}/console"
        ),
        what="back from the logout endpoint",
    )
    wait_until(lambda: browser.find_element(By.ID, "sign-in").is_displayed(), what="the sign-in button")
    assert _stored(browser) is None and browser.find_element(By.ID, "signed-in-as").text == ""
    assert not browser.find_element(By.ID, "sign-out").is_displayed()
