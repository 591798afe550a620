"""Session-wide fixtures: one real Azurite for the whole session (no storage mocks), real HTTP targets."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from devhost.azurite import Azurite
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store.sealing import new_key_material


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Azurite]:
    """A real Azurite on free loopback ports, in memory, stopped at the end of the session."""
    location: Path = tmp_path_factory.mktemp("azurite")
    with Azurite(location, in_memory=True) as running:
        yield running


@pytest.fixture
def settings(azurite: Azurite) -> Settings:
    """Settings of an isolated deployment: its own tables and queue in the shared Azurite."""
    suffix = uuid.uuid4().hex[:10]
    return Settings(
        storage=StorageSettings(connection_string=azurite.connection_string),
        allow_private_targets=True,
        table_prefix=f"t{suffix}",
        occurrence_queue=f"occ-{suffix}",
        secret_keys=new_key_material(),  # a real key per test, not the development fallback
        dispatch_queue=f"dsp-{suffix}",
    )


class ManualClock:
    """A clock the test moves by hand (the Clock protocol is injectable by design)."""

    def __init__(self, now: datetime) -> None:
        self.current = now

    def now(self) -> datetime:
        return self.current

    def advance(self, delta: timedelta) -> None:
        self.current += delta


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 1, 12, 0, 30, tzinfo=UTC))


@pytest.fixture
def runtime(settings: Settings) -> Runtime:
    return Runtime.create(settings)


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: datetime


@dataclass
class HttpTarget:
    """A real local HTTP server that records every request and answers with `status`."""

    url: str
    requests: list[Received] = field(default_factory=list)
    status: int = 200
    body: bytes = b"hello from the target"

    def wait_for(self, count: int, timeout: float) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return list(self.requests)


@pytest.fixture
def http_target() -> Iterator[HttpTarget]:
    target = HttpTarget(url="")

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            target.requests.append(Received(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, datetime.now(UTC)
            ))
            self.send_response(target.status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(target.body)))
            self.end_headers()
            self.wfile.write(target.body)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    target.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield target
    server.shutdown()
    server.server_close()
