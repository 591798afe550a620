"""No request smuggling between jobs: framing headers never leave with a job's request, and no connection
serves two jobs. The listener reads each connection as a keep-alive server would, so smuggled bytes would
show up as leftover after the first request."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest

from shared.actions.http import HttpTarget
from shared.model import JobErrorAction
from shared.settings import Settings
from tests.executor.peers.raw import FramingServer
from tests.executor.support import context

# The classic CL.TE / TE.CL payload: a chunked terminator, then a second request whose last header is left
# open so the next job's request line (and its Authorization header) would become that header's value.
SMUGGLED = "0\r\n\r\nPOST /capture HTTP/1.1\r\nHost: attacker\r\nContent-Length: 400\r\nX-Swallow: "


@pytest.fixture
def server() -> Iterator[FramingServer]:
    running = FramingServer().start()
    yield running
    running.close()


def _action(url: str, headers: dict[str, str], body: str | None = None, **request: object) -> JobErrorAction:
    # Built as a definition stored before the write-time rule would be: the API refuses these headers now
    # (tests/api/test_http_action_writes.py); the action must still never send them.
    return JobErrorAction.model_validate(
        {"type": "Http", "request": {"uri": url, "method": "POST", "headers": headers, "body": body, **request}}
    )


def test_a_smuggling_attempt_arrives_as_one_clean_request_and_the_next_job_arrives_intact(
    settings: Settings, server: FramingServer
) -> None:
    target = HttpTarget(settings, timeout=10)
    base = f"http://127.0.0.1:{server.port}"
    attacker = _action(
        f"{base}/attacker",
        {
            "Transfer-Encoding": "chunked",
            "Content-Length": "5",
            "Connection": "keep-alive",
            "Keep-Alive": "timeout=60",
            "Host": "victim.example",
            "TE": "trailers",
            "Upgrade": "h2c",
            "Proxy-Connection": "keep-alive",
            "X-Fine": "1",
        },
        SMUGGLED,
    )
    victim = _action(
        f"{base}/victim",
        {"X-Victim": "1"},
        "victim body",
        authentication={"type": "Basic", "username": "victim", "password": "pw-victim"},
    )
    first = target.run(attacker, context())
    second = target.run(victim, context())

    assert len(server.exchanges) == 2  # one connection per job: nothing shared
    smuggle, intact = server.exchanges
    assert smuggle.request_line == "POST /attacker HTTP/1.1"
    assert smuggle.body == SMUGGLED.encode() and smuggle.leftover == b""  # one request, all of its body
    headers = smuggle.headers
    assert "transfer-encoding" not in headers and headers["content-length"] == str(len(SMUGGLED))
    assert headers["host"] == f"127.0.0.1:{server.port}" and headers["connection"] == "close"
    assert not {"keep-alive", "te", "upgrade", "proxy-connection"} & set(headers)
    assert headers["x-fine"] == "1"

    assert intact.request_line == "POST /victim HTTP/1.1"
    assert intact.body == b"victim body" and intact.leftover == b""
    assert intact.headers["authorization"] == "Basic " + base64.b64encode(b"victim:pw-victim").decode()
    assert first.succeeded and first.message.endswith("Body: answer to POST /attacker HTTP/1.1")
    assert second.succeeded and second.message.endswith("Body: answer to POST /victim HTTP/1.1")


def test_jobs_on_one_target_never_share_a_connection(settings: Settings, server: FramingServer) -> None:
    target = HttpTarget(settings, timeout=10)
    for n in range(3):
        assert target.run(_action(f"http://127.0.0.1:{server.port}/j{n}", {}), context()).succeeded
    assert [e.request_line for e in server.exchanges] == [f"POST /j{n} HTTP/1.1" for n in range(3)]
    assert all(e.leftover == b"" and e.headers["connection"] == "close" for e in server.exchanges)
