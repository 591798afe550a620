"""A rate limit's turn on the wire (ExecutionContext.before_send, outbound.py `_paced`; executor/wire_turns.py): the
turn is awaited once, after the connection is made and before the request's first byte is written, for a request
with a body and one without; a request that cannot connect takes no turn. And requests taking their turns under
one rule reach a real local target no closer than the rule's half slot and its window allow, in slot order, whichever
connected first.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from datetime import UTC, datetime, timedelta

import pytest

from shared.actions.outbound import Deadline, OutboundError, exchange
from shared.clock import SystemClock
from shared.executor.wire_turns import WireTurns
from shared.jobstate import window_of
from shared.private_targets import PrivateTargets
from tests.executor.peers.servers import ok, serve


def send(port: int, method: str, body: bytes | None, turn: object) -> None:
    asyncio.run(
        exchange(
            method,
            "http",
            "127.0.0.1",
            port,
            "/paced",
            {},
            body,
            private_targets=PrivateTargets.parse("loopback"),
            ssl_context=ssl.create_default_context(),
            deadline=Deadline(30),
            max_body=100,
            before_send=turn,  # type: ignore[arg-type]
        )
    )


@pytest.mark.parametrize(("method", "body"), [("POST", b"fire"), ("GET", None), ("POST", b"")])
def test_the_turn_is_taken_once_after_connecting_and_before_anything_is_written(
    method: str, body: bytes | None
) -> None:
    target = serve(ok)
    turns: list[tuple[float, int]] = []

    async def turn() -> None:
        await asyncio.sleep(0.3)  # connected: the target must not have the request yet
        turns.append((time.monotonic(), len(target.hits)))

    try:
        port = int(target.url.rsplit(":", 1)[1])
        send(port, method, body, turn)
        assert len(turns) == 1 and turns[0][1] == 0
        assert [hit.method for hit in target.hits] == [method]
    finally:
        target.close()


def test_a_request_that_cannot_connect_takes_no_turn() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    turns: list[float] = []

    async def turn() -> None:
        turns.append(time.monotonic())

    with pytest.raises(OutboundError):
        send(port, "POST", b"x", turn)
    assert turns == []


def test_turns_under_one_rule_reach_the_target_spaced_and_in_slot_order() -> None:
    rate, share = 20.0, 0.97
    target = serve(ok)
    port = int(target.url.rsplit(":", 1)[1])
    turns = WireTurns(SystemClock())
    start = datetime.now(UTC) + timedelta(seconds=1)
    granted: list[int] = []  # the order the turns let the requests' first bytes go
    asked: dict[int, float] = {}  # when each began to wait for its turn (monotonic)
    went: dict[int, float] = {}  # when its turn came

    async def one(i: int) -> None:
        slot = start + timedelta(seconds=i / (rate * share))
        # Connected before its slot, as the executor does; each odd one before the even one ahead of it.
        lead = 0.4 if i % 2 else 0.3
        await asyncio.sleep(max((slot - datetime.now(UTC)).total_seconds() - lead, 0))

        async def turn() -> None:
            asked[i] = time.monotonic()
            await turns.turn("rule", rate, share, slot, f"h{i:02d}")
            went[i] = time.monotonic()
            granted.append(i)

        await exchange(
            "POST",
            "http",
            "127.0.0.1",
            port,
            f"/{i:02d}",
            {},
            b"x",
            private_targets=PrivateTargets.parse("loopback"),
            ssl_context=ssl.create_default_context(),
            deadline=Deadline(60),
            max_body=100,
            before_send=turn,
        )

    async def herd() -> None:
        await asyncio.gather(*(one(i) for i in range(30)))

    try:
        asyncio.run(herd())
        hits = sorted(target.hits, key=lambda hit: hit.at)
        # Order and spacing as the turns let the requests' first bytes go. The target's own clock cannot show them
        # on a busy machine: it reads a request once its thread picks it up, which can swap two 50 ms apart or
        # bring them closer; it only shows that each arrived, and none before its slot.
        assert sorted(hit.path for hit in hits) == [f"/{i:02d}" for i in range(30)]
        assert min(hit.at.timestamp() for hit in hits) >= start.timestamp() - 0.02
        # In slot order among those waiting: a later slot goes first only when the earlier one was not yet
        # connected (on a busy machine; the lead of 0.3-0.4 s is more than the executor's connect_lead).
        assert sorted(granted) == list(range(30))
        overtaken = [(i, j) for i in range(30) for j in range(i + 1, 30) if went[j] < went[i]]
        assert all(asked[i] > went[j] for i, j in overtaken), overtaken
        instants = sorted(went.values())
        half_slot = 0.5 / (rate * share)
        assert all(b - a >= half_slot - 0.002 for a, b in zip(instants, instants[1:], strict=False))
        n, window = window_of(rate, share)
        assert all(instants[i + n] - instants[i] >= window - 0.002 for i in range(len(instants) - n))
    finally:
        target.close()
