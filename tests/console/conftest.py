"""The console tests run against the real function_app.py under the local host, one per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.local_host import local_host

V = {"api-version": "2016-03-01"}


@pytest.fixture(scope="module")
def host_url(azurite) -> Iterator[str]:
    with local_host(azurite) as base:
        yield base
