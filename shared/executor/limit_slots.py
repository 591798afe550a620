"""Slots of the cross-instance limits (issue 27) taken under their row's ETag: a collection's concurrency gate
(`settle`, `release`, `renew`) and a host's pacer (`reserve`). jobstate decides (concurrency.py `acquire`,
`released`, `renewed`; pacing.py `pace`), store/limits.py reads and writes the row, and `read_modify_write` joins
them: one read and one conditional write per call, read and decided again after a lost race (up to ATTEMPTS,
with a jittered pause: a herd of instances may race for one row). Called by limits.py, gathered per collection
and per rule, so a herd's asks cost one round trip.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import TypeVar

from ..jobstate.concurrency import Acquired, SlotRequest, acquire, released, renewed
from ..jobstate.pacing import pace
from ..keys import CollectionKey
from ..store import ConcurrencyError, read_modify_write
from ..store.limits import ConcurrencyGates, GateRow, HostPacers, PacerRow
from ..store.tables import backoff
from ..timings import Timings

R = TypeVar("R")
T = TypeVar("T")
ATTEMPTS = 60  # lost ETag races before giving up: a herd of instances may race for one row


def settle(
    gates: ConcurrencyGates,
    timings: Timings,
    collection: CollectionKey,
    limit: int,
    done: Iterable[str],
    requests: Sequence[SlotRequest],
    now: datetime,
) -> Acquired:
    """`done`'s slots given back, then slots for `requests` (attempts about to start), in one read and one write:
    the granted ones hold a slot for `slot_lease`; the others are told their place in the line, which they keep
    for `waiter_lease` (they ask again before it ends)."""
    gone = list(done)

    def decide(row: GateRow) -> tuple[GateRow, Acquired]:
        state = released(row.state, gone, now)
        answer = acquire(state, limit, requests, now, timings.slot_lease, timings.waiter_lease)
        return GateRow(answer.state, row.etag), answer

    return _update(
        lambda: gates.read(collection), lambda row: gates.write(collection, row), decide, collection, timings
    )


def release(
    gates: ConcurrencyGates, timings: Timings, collection: CollectionKey, holders: Iterable[str], now: datetime
) -> None:
    """The holders' slots (and places in line) given back."""
    gone = list(holders)

    def decide(row: GateRow) -> tuple[GateRow, None]:
        return GateRow(released(row.state, gone, now), row.etag), None

    _update(lambda: gates.read(collection), lambda row: gates.write(collection, row), decide, collection, timings)


def renew(
    gates: ConcurrencyGates,
    timings: Timings,
    collection: CollectionKey,
    holders: Iterable[str],
    now: datetime,
    lease_for: timedelta,
) -> frozenset[str]:
    """The holders' slots held for `lease_for` more; the holders whose slot had lapsed meanwhile."""
    wanted = list(holders)

    def decide(row: GateRow) -> tuple[GateRow, frozenset[str]]:
        state, lost = renewed(row.state, wanted, now, lease_for)
        return GateRow(state, row.etag), lost

    return _update(
        lambda: gates.read(collection), lambda row: gates.write(collection, row), decide, collection, timings
    )


def reserve(
    pacers: HostPacers, timings: Timings, collection: CollectionKey, rule: str, k: int, rate: float, now: datetime
) -> list[datetime]:
    """k consecutive slots of the rule's pacer (jobstate.pacer_key), 1/rate apart, from its next free slot or now:
    when each of k requests asked for now may start."""

    def decide(row: PacerRow) -> tuple[PacerRow, list[datetime]]:
        paced = pace(row.next_free, rate, now, k)
        return PacerRow(paced.next_free, row.etag), list(paced.slots)

    return _update(
        lambda: pacers.read(collection, rule),
        lambda row: pacers.write(collection, rule, row),
        decide,
        collection,
        timings,
    )


def _update(
    read: Callable[[], R],
    write: Callable[[R], R],
    decide: Callable[[R], tuple[R, T]],
    collection: CollectionKey,
    timings: Timings,
) -> T:
    """`decide` on the row as read, written under its ETag; decided again on a fresh read after a lost race.
    What `decide` answered beside the row it wrote."""
    answers: list[T] = []

    def change(row: R) -> R:
        updated, answer = decide(row)
        answers[:] = [answer]  # the last decision is the one written
        return updated

    try:
        read_modify_write(
            read,
            change,
            lambda row, _: write(row),
            attempts=ATTEMPTS,
            pause=backoff(timings.race_backoff.total_seconds()),
        )
    except ConcurrencyError as exc:
        raise ConcurrencyError(
            f"the limit row of {collection.resource_id} kept changing ({ATTEMPTS} attempts)"
        ) from exc
    return answers[0]
