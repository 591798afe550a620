"""A subscription's page lists the destinations held back (destinations.js, from GET /subscriptions/{s}/providers/
Microsoft.Scheduler/destinations) in a real headless Chromium against the real function_app.py under the local
host: a destination whose circuit is Open is listed with its failures and next probe, its row highlighted; one
pushed back shows its budget and hold, its row not highlighted. The rows are written through the store's
interface (`store.destinations.write`) in the host's own tables."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from selenium.webdriver.common.by import By

from devhost.azurite import Azurite
from shared.jobstate.pushback import DestinationState
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.destinations import DestinationRow
from tests.support.local_host import local_host

from .browser import screenshot, wait_until

SUB = "destinations-sub"


@pytest.fixture(scope="module")
def host_url(azurite: Azurite) -> Iterator[str]:
    """The host, its destinations in tables of their own (they are the deployment's): one Open circuit, one
    push-back, both for ten minutes from now."""
    prefix = f"dst{uuid.uuid4().hex[:10]}"
    with local_host(azurite, SCHEDULER_TABLE_PREFIX=prefix) as base:
        settings = {"AzureWebJobsStorage": azurite.connection_string, "SCHEDULER_TABLE_PREFIX": prefix}
        rt = Runtime.create(Settings.from_environment(settings))
        try:
            assert rt.store.destinations is not None
            now = datetime.now(UTC).replace(microsecond=0)
            until = now + timedelta(minutes=10)
            open_circuit = DestinationState(failures=6, failing_since=now, failed_at=now, open_until=until)
            pushed = DestinationState(rate=4.5, hold_until=until, pushed_at=now, episode_at=now, last_status=503)
            rt.store.destinations.write("127.0.0.1:8080", DestinationRow(open_circuit))
            rt.store.destinations.write("api.example.com", DestinationRow(pushed))
        finally:
            rt.close()
        yield base


def test_the_subscription_page_lists_the_destinations_an_open_circuit_highlighted(host_url: str, browser) -> None:
    browser.get(f"{host_url}/console/?subscription={SUB}")
    shown = wait_until(lambda: browser.find_element(By.ID, "destinations-table"), what="the destinations table")
    rows = {r.find_element(By.CSS_SELECTOR, "th").text: r for r in shown.find_elements(By.CSS_SELECTOR, "tbody tr")}
    assert list(rows) == ["127.0.0.1:8080", "api.example.com"]
    opened, pushed = rows["127.0.0.1:8080"], rows["api.example.com"]
    assert "circuit-open" in (opened.get_attribute("class") or "").split()
    cells = [c.text for c in opened.find_elements(By.CSS_SELECTOR, "td")]
    assert cells[:2] == ["Open", "6"] and cells[2].endswith(" UTC") and cells[3] == "—"
    assert opened.find_element(By.CSS_SELECTOR, ".circuit-open").value_of_css_property("font-weight") == "600"
    assert "circuit-open" not in (pushed.get_attribute("class") or "").split()
    assert [c.text for c in pushed.find_elements(By.CSS_SELECTOR, "td")][:4] == ["Closed", "0", "—", "4.5/s"]
    assert "HTTP 503 at " in pushed.text
    assert "2 destinations held back" in shown.find_element(By.TAG_NAME, "caption").text
    screenshot(browser, "console-destinations")
