"""A second real Azurite, for the tests of more than one storage account."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devhost.azurite import Azurite


@pytest.fixture(scope="session")
def second_azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Azurite]:
    with Azurite(tmp_path_factory.mktemp("azurite-second"), in_memory=True) as running:
        yield running
