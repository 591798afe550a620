"""Session-wide fixtures: one real Azurite for the whole session (no storage mocks), real HTTP targets."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from devhost.azurite import Azurite
from shared.clock import SystemClock
from shared.private_targets import PrivateTargets
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store.memory import MemoryStorage
from shared.store.sealing import new_key_material
from shared.store.storage import Storage
from shared.timings import Timings
from tests.executor.peers.servers import Hit, Server, serve
from tests.support.clock import ManualClock


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Azurite]:
    """A real Azurite on free loopback ports, in memory, stopped at the end of the session."""
    location: Path = tmp_path_factory.mktemp("azurite")
    with Azurite(location, in_memory=True) as running:
        yield running


@pytest.fixture
def azurite_of_its_own(tmp_path: Path) -> Iterator[Azurite]:
    """An Azurite for one test alone (a host killed mid-write leaves nothing behind for the others)."""
    with Azurite(tmp_path / "azurite", in_memory=True) as azurite:
        yield azurite


@pytest.fixture
def settings(azurite: Azurite) -> Settings:
    """Settings of an isolated deployment: its own tables and queue in the shared Azurite."""
    suffix = uuid.uuid4().hex[:10]
    return Settings(
        storage=StorageSettings(connection_string=azurite.connection_string),
        private_targets=PrivateTargets.parse("loopback"),  # the tests' targets listen on loopback
        table_prefix=f"t{suffix}",
        occurrence_queue=f"occ-{suffix}",
        secret_keys=new_key_material(),  # a real key per test, not the development fallback
        dispatch_queue=f"dsp-{suffix}",
        dispatch_spread=timedelta(0),  # a tick's tasks visible at once: tests drain them right after it
        # Tests drain tasks at a hand-set instant, which a wait for a recorder's write would not see pass: real
        # seconds of sleep per task. tests/dispatcher/test_held_advance.py runs the wait on a clock it moves.
        timings=Timings(advance_settle=timedelta(0)),
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 1, 12, 0, 30, tzinfo=UTC))


@pytest.fixture
def storage() -> Storage | None:
    """Where a test's deployment keeps its tables and queues: None is the session's Azurite (through the settings'
    connection string). A folder of logic tests (a conftest.py) overrides it with `memory_storage`."""
    return None


@pytest.fixture
def memory_storage() -> MemoryStorage:
    """Tables and queues in memory (shared/store/memory, held to Azurite's behaviour by tests/store/contract), on
    the real clock as Azurite's queues are: a runtime on a ManualClock still sees messages turn visible in real
    seconds."""
    return MemoryStorage(SystemClock())


@pytest.fixture
def runtime(settings: Settings, storage: Storage | None) -> Iterator[Runtime]:
    runtime = Runtime.create(settings, storage=storage)
    yield runtime
    runtime.close()


@dataclass
class HttpTarget:
    """A real local HTTP server (tests/executor/peers/servers.py) that records every request and answers
    with `status` and `body`."""

    server: Server
    status: int = 200
    body: bytes = b"hello from the target"

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def requests(self) -> list[Hit]:
        return self.server.hits

    def wait_for(self, count: int, timeout: float) -> list[Hit]:
        deadline = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return list(self.requests)


@pytest.fixture
def http_target() -> Iterator[HttpTarget]:
    target: HttpTarget | None = None

    def answer(_: Hit) -> tuple[int, dict[str, str], bytes]:
        assert target is not None
        return target.status, {"Content-Type": "text/plain"}, target.body

    target = HttpTarget(serve(answer))
    yield target
    target.server.close()
