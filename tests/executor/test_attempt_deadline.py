"""One deadline per attempt (60 s by default) covers connect, TLS, sending and the whole response: a target
that trickles a byte at a time is cut at the deadline, not kept alive by each byte resetting a read timeout.
The tests use a short deadline; the product default is asserted separately."""

from __future__ import annotations

import inspect
import socket
import time
from dataclasses import replace

from shared.actions.http import TIMEOUT_SECONDS, HttpTarget
from shared.model import JobErrorAction
from shared.settings import Settings
from tests.executor.peers.raw import Trickler
from tests.executor.support import context

DEADLINE = 1.5
# Scheduling noise on a busy 2-core machine. Still far below what the tricklers would take uncut (10 s and more).
SLACK = 3.0


def _action(url: str, **request: object) -> JobErrorAction:
    return JobErrorAction.model_validate({"type": "Http", "request": {"uri": url, "method": "GET", **request}})


def _timed(target: HttpTarget, action: JobErrorAction) -> tuple[float, str]:
    started = time.monotonic()
    result = target.run(action, context())
    assert not result.succeeded
    return time.monotonic() - started, result.message


def test_the_product_deadline_is_60_seconds(settings: Settings) -> None:
    assert TIMEOUT_SECONDS == 60
    assert inspect.signature(HttpTarget).parameters["timeout"].default == 60
    assert HttpTarget(settings).timeout == 60


def test_a_status_line_trickled_a_byte_at_a_time_is_cut_at_the_deadline(settings: Settings) -> None:
    trickler = Trickler(b"", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", interval=0.25)
    try:
        elapsed, message = _timed(HttpTarget(settings, timeout=DEADLINE), _action(f"http://127.0.0.1:{trickler.port}/"))
    finally:
        trickler.close()
    assert message == f"Http Action - Request to host '127.0.0.1' timed out after {DEADLINE:g} s"
    assert DEADLINE - 0.05 <= elapsed < DEADLINE + SLACK, elapsed
    print(f"\nstatus-line trickle (a byte every 0.25 s), deadline {DEADLINE} s: cut after {elapsed:.3f} s")


def test_a_body_trickled_a_byte_at_a_time_is_cut_at_the_deadline(settings: Settings) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
    trickler = Trickler(head, b"x" * 1000, interval=0.1)
    try:
        elapsed, message = _timed(HttpTarget(settings, timeout=DEADLINE), _action(f"http://127.0.0.1:{trickler.port}/"))
    finally:
        trickler.close()
    assert message == f"Http Action - Request to host '127.0.0.1' timed out after {DEADLINE:g} s"
    assert DEADLINE - 0.05 <= elapsed < DEADLINE + SLACK, elapsed


def test_a_tls_handshake_that_never_finishes_is_cut_at_the_deadline(settings: Settings) -> None:
    trickler = Trickler(b"", b"\x16\x03\x01" + b"\x00" * 50, interval=0.25)  # a TLS record header, then zeros
    try:
        elapsed, message = _timed(
            HttpTarget(settings, timeout=DEADLINE), _action(f"https://127.0.0.1:{trickler.port}/")
        )
    finally:
        trickler.close()
    assert message.endswith(f"timed out after {DEADLINE:g} s"), message
    assert DEADLINE - 0.05 <= elapsed < DEADLINE + SLACK, elapsed


def test_a_silent_listener_is_cut_at_the_deadline(settings: Settings) -> None:
    with socket.socket() as silent:  # accepts (the kernel completes the handshake) and never reads or answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        elapsed, message = _timed(
            HttpTarget(settings, timeout=DEADLINE), _action(f"http://127.0.0.1:{silent.getsockname()[1]}/")
        )
    assert message.endswith(f"timed out after {DEADLINE:g} s")
    assert DEADLINE - 0.05 <= elapsed < DEADLINE + SLACK, elapsed


def test_the_token_request_spends_the_same_deadline(settings: Settings) -> None:
    """A trickling token endpoint cannot stretch the attempt: the token request ends at the attempt's deadline."""
    trickler = Trickler(b"", b"HTTP/1.1 200 OK\r\n" * 10, interval=0.25)
    target = HttpTarget(replace(settings, aad_authority_host=f"http://127.0.0.1:{trickler.port}"), timeout=DEADLINE)
    auth = {"type": "ActiveDirectoryOAuth", "tenant": "t1", "clientId": "c", "secret": "s", "audience": "a"}
    try:
        elapsed, message = _timed(target, _action("http://127.0.0.1:9/", authentication=auth))
    finally:
        trickler.close()
    assert message.endswith("the token endpoint timed out"), message
    assert elapsed < DEADLINE + SLACK, elapsed
