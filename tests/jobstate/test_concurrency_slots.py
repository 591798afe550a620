"""A collection's maxConcurrentExecutions as leased slots and a line (jobstate/concurrency.py), without storage:
never more holders than the limit, whatever the mix of asks, releases, renewals and crashes; slots go to the
line in due order; a crashed holder's slot and a silent waiter's place come back by themselves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from shared import jobstate
from shared.jobstate import GateState, SlotRequest
from shared.timings import Timings

NOW = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
SECOND = timedelta(seconds=1)
# The leases as the settings hold them by default (shared/timings.py); the store hands them to these rules.
SLOT_LEASE, WAITER_LEASE = Timings().slot_lease, Timings().waiter_lease
LEASES = {"lease_for": SLOT_LEASE, "wait_for": WAITER_LEASE}


def ask(*names: str, due: datetime = NOW) -> list[SlotRequest]:
    return [SlotRequest(name, due) for name in names]


def test_slots_up_to_the_limit_then_a_line_in_due_order() -> None:
    early, late = NOW - 10 * SECOND, NOW
    first = jobstate.acquire(GateState(), 2, ask("b", "a", due=late), NOW, **LEASES)
    assert first.granted == ("a", "b") and first.waiting == {}
    # Another instance asks for a later one, then for an earlier one: the earlier one is first in line.
    later = jobstate.acquire(first.state, 2, ask("z", due=late), NOW, **LEASES)
    assert later.granted == () and later.waiting == {"z": 1}
    earlier = jobstate.acquire(later.state, 2, ask("c", due=early), NOW, **LEASES)
    assert earlier.waiting == {"c": 1}
    freed = jobstate.released(earlier.state, ["a"], NOW + SECOND)
    # The later one asks first after the release, but the slot is the earlier one's: it keeps waiting.
    again = jobstate.acquire(freed, 2, ask("z", due=late), NOW + SECOND, **LEASES)
    assert again.granted == () and again.waiting == {"z": 2}
    turn = jobstate.acquire(again.state, 2, ask("c", due=early), NOW + SECOND, **LEASES)
    assert turn.granted == ("c",) and turn.waiting == {}
    assert {lease.holder for lease in turn.state.leases} == {"b", "c"}


def test_asking_again_is_idempotent_and_renews() -> None:
    held = jobstate.acquire(GateState(), 1, ask("a"), NOW, **LEASES)
    again = jobstate.acquire(held.state, 1, ask("a"), NOW + 30 * SECOND, **LEASES)
    assert again.granted == ("a",) and len(again.state.leases) == 1
    assert again.state.leases[0].until == NOW + 30 * SECOND + SLOT_LEASE
    state, lost = jobstate.renewed(again.state, ["a", "gone"], NOW + 60 * SECOND, SLOT_LEASE)
    assert lost == frozenset({"gone"}) and state.leases[0].until == NOW + 60 * SECOND + SLOT_LEASE


def test_a_crashed_holder_and_a_silent_waiter_come_back_by_themselves() -> None:
    held = jobstate.acquire(GateState(), 1, ask("crashed"), NOW, **LEASES)
    waits = jobstate.acquire(held.state, 1, ask("silent", due=NOW - SECOND), NOW, **LEASES)
    assert waits.waiting == {"silent": 1}
    after = NOW + WAITER_LEASE + SECOND  # the waiter stopped asking: its place lapsed
    blocked = jobstate.acquire(waits.state, 1, ask("next"), after, **LEASES)
    assert blocked.waiting == {"next": 1}  # the crashed holder's lease has not lapsed yet
    lapsed = NOW + SLOT_LEASE + SECOND
    assert jobstate.acquire(blocked.state, 1, ask("next"), lapsed, **LEASES).granted == ("next",)


operations = st.lists(
    st.tuples(
        st.sampled_from(["ask", "release", "renew", "wait"]),
        st.lists(st.sampled_from([f"h{n}" for n in range(12)]), min_size=1, max_size=5, unique=True),
        st.integers(min_value=0, max_value=200),
    ),
    max_size=60,
)


@given(st.integers(min_value=1, max_value=5), operations)
def test_never_more_holders_than_the_limit(limit: int, ops) -> None:
    state = GateState()
    now = NOW
    for op, holders, seconds in ops:
        if op == "ask":
            done = jobstate.acquire(
                state, limit, [SlotRequest(h, NOW + seconds * SECOND) for h in holders], now, **LEASES
            )
            state = done.state
            assert set(done.granted).isdisjoint(done.waiting)
            assert set(done.granted) | set(done.waiting) == set(holders)
        elif op == "release":
            state = jobstate.released(state, holders, now)
        elif op == "renew":
            state, _ = jobstate.renewed(state, holders, now, SLOT_LEASE)
        else:
            now += seconds * SECOND
        held = state.held(now)
        assert len(held) <= limit and len({lease.holder for lease in held}) == len(held)
        assert not {w.holder for w in state.waiters} & {lease.holder for lease in held}


def test_a_waiter_reads_the_line_and_asks_again_only_when_it_could_have_a_slot() -> None:
    """`worth_asking` from the state as read: a waiter whose place a free slot covers asks (writes) again; one
    behind others only reads, until its place would lapse; one missing from the line asks to join it again."""
    full = jobstate.acquire(GateState(), 1, ask("holder"), NOW, **LEASES).state
    line = jobstate.acquire(full, 1, ask("w1", "w2", due=NOW + SECOND), NOW, **LEASES).state
    renew_within = 5 * SECOND
    assert not jobstate.worth_asking(line, 1, "w1", NOW, renew_within)  # the slot is held
    freed = jobstate.released(line, ["holder"], NOW + SECOND)
    assert jobstate.worth_asking(freed, 1, "w1", NOW + SECOND, renew_within)  # first in line, a slot free
    assert not jobstate.worth_asking(freed, 1, "w2", NOW + SECOND, renew_within)  # the free slot is w1's
    assert jobstate.worth_asking(freed, 2, "w2", NOW + SECOND, renew_within)  # a limit raised: room for both
    assert jobstate.worth_asking(line, 1, "holder", NOW, renew_within)  # holds one: asking keeps it
    assert jobstate.worth_asking(line, 1, "stranger", NOW, renew_within)  # not in the line: it joins
    near_lapse = NOW + WAITER_LEASE - renew_within
    assert jobstate.worth_asking(line, 1, "w2", near_lapse, renew_within)  # its place would lapse: renewed
