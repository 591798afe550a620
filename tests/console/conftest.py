"""The console tests run against the real function_app.py under the local host, one per module, and share
one headless Chromium (started once for the whole folder: it is the heaviest part on a small machine)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.local_host import local_host

from .browser import start_browser

V = {"api-version": "2016-03-01"}


@pytest.fixture(scope="module")
def host_url(azurite) -> Iterator[str]:
    with local_host(azurite) as base:
        yield base


@pytest.fixture(scope="package")
def browser() -> Iterator:
    driver = start_browser()
    try:
        yield driver
    finally:
        driver.quit()
