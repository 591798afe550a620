"""A destination's circuit (jobstate/circuit.py), without storage: it opens after FAILURES failures in a row, or
after two in a row `sustained` apart; any other answer closes it and clears the count; a failure older than
`forget` counts from zero; while it is open an attempt is held to the next probe's instant plus `answer_wait`,
the first to ask from that instant on is the probe (and moves the instant one `probe_every` on), its own
redelivery goes again; whatever the interleaving of asks and answers, probes are `probe_every` apart and a
closed circuit lets everything go."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.jobstate.circuit import FAILURES, Circuit, CircuitRules, Go, Held, answered, circuit_of, gate
from shared.jobstate.pushback import DestinationState

NOW = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
RULES = CircuitRules(
    sustained=timedelta(seconds=10),
    probe_every=timedelta(seconds=5),
    answer_wait=timedelta(seconds=1),
    forget=timedelta(minutes=5),
)
US = timedelta(microseconds=1)


def s(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


def failed(state: DestinationState, at: datetime, holder: str = "a") -> DestinationState:
    return answered(state, at, True, holder, RULES)


def succeeded(state: DestinationState, at: datetime, holder: str = "a") -> DestinationState:
    return answered(state, at, False, holder, RULES)


TENTH = timedelta(seconds=0.1)


def failing(n: int, every: timedelta = TENTH, start: datetime = NOW) -> DestinationState:
    state = DestinationState()
    for i in range(n):
        state = failed(state, start + i * every, f"h{i}")
    return state


def opened(at: datetime = NOW) -> DestinationState:
    """Open since `at` (FAILURES failures in a row, the last at `at`): the first probe from at + probe_every."""
    state = failing(FAILURES, start=at - (FAILURES - 1) * TENTH)
    assert state.open_until == at + RULES.probe_every
    return state


# -- opening ---------------------------------------------------------------------------------------------------


def test_it_opens_at_the_fifth_failure_in_a_row() -> None:
    assert FAILURES == 5
    state = failing(FAILURES - 1)
    assert state.failures == 4 and state.open_until is None and circuit_of(state, NOW) == Circuit.CLOSED
    assert state.failing_since == NOW and state.failed_at == NOW + s(0.3)
    state = failed(state, NOW + s(0.4))
    assert state.failures == 5 and state.open_until == NOW + s(0.4) + RULES.probe_every
    assert circuit_of(state, NOW + s(0.4)) == Circuit.OPEN


@pytest.mark.parametrize(
    ("apart", "opens"),
    [(RULES.sustained - US, False), (RULES.sustained, True), (s(60), True)],
    ids=["just-short", "exactly", "longer"],
)
def test_two_failures_in_a_row_sustained_apart_open_it(apart, opens) -> None:
    state = failed(failed(DestinationState(), NOW), NOW + apart)
    assert state.failures == 2
    assert state.open_until == (NOW + apart + RULES.probe_every if opens else None)


def test_failures_spread_over_sustained_open_it_at_the_one_that_completes_the_span() -> None:
    state = DestinationState()
    for k in range(3):  # 0, 4.5, 9 s: not yet 10 s of failing
        state = failed(state, NOW + s(4.5 * k))
    assert state.failures == 3 and state.open_until is None
    state = failed(state, NOW + s(10))
    assert state.open_until == NOW + s(10) + RULES.probe_every


def test_a_success_closes_it_and_clears_the_count() -> None:
    for state in (failing(3), opened()):
        closed = succeeded(state, NOW + s(1))
        assert closed.failures == 0 and closed.failing_since is None and closed.failed_at is None
        assert closed.open_until is None and closed.probe is None and circuit_of(closed, NOW) == Circuit.CLOSED
        assert failed(closed, NOW + s(2)).failures == 1  # counts from zero again
    quiet = DestinationState(rate=5.0)
    assert succeeded(quiet, NOW) is quiet  # nothing to clear: nothing to write


def test_a_success_leaves_the_push_back_budget_alone() -> None:
    state = replace(opened(), rate=7.0, hold_until=NOW + s(3))
    closed = succeeded(state, NOW + s(1))
    assert closed.rate == 7.0 and closed.hold_until == NOW + s(3) and closed.open_until is None


@pytest.mark.parametrize(
    ("after", "failures", "opens"),
    [(RULES.forget, 5, True), (RULES.forget + US, 1, False)],
    ids=["at-forget: still counts", "past-forget: from zero"],
)
def test_a_failure_older_than_forget_counts_from_zero(after, failures, opens) -> None:
    state = failing(FAILURES - 1)
    last = state.failed_at
    assert last is not None
    state = failed(state, last + after)
    assert state.failures == failures and (state.open_until is not None) == opens
    if not opens:
        assert state.failing_since == last + after


def test_a_circuit_left_open_longer_than_forget_counts_from_zero_at_its_next_failure() -> None:
    state = opened()
    later = NOW + RULES.forget + s(1)
    state = failed(state, later)
    assert state.failures == 1 and state.open_until is None and state.probe is None
    assert circuit_of(state, later) == Circuit.CLOSED


# -- the gate --------------------------------------------------------------------------------------------------


def test_a_closed_circuit_lets_every_attempt_go_as_it_is() -> None:
    for state in (DestinationState(), failing(3)):
        turn = gate(state, NOW, "a", RULES)
        assert isinstance(turn, Go) and turn.state is state and not turn.probe


def test_an_open_circuit_holds_an_attempt_until_its_probe_instant_plus_the_answer_wait() -> None:
    state = opened()
    until = state.open_until
    assert until is not None
    for at in (NOW, until - US):
        assert gate(state, at, "a", RULES) == Held(until + RULES.answer_wait)


def test_the_first_to_ask_at_the_probe_instant_is_the_probe_and_moves_the_instant_on() -> None:
    state = opened()
    until = state.open_until
    assert until is not None
    turn = gate(state, until, "probe", RULES)
    assert isinstance(turn, Go) and turn.probe
    assert turn.state.probe == "probe" and turn.state.open_until == until + RULES.probe_every
    assert circuit_of(turn.state, until) == Circuit.PROBING
    # Another attempt at the same instant waits for the next probe's instant.
    assert gate(turn.state, until, "other", RULES) == Held(until + RULES.probe_every + RULES.answer_wait)
    # The probe's own redelivery goes again (it is the same probe), changing nothing.
    again = gate(turn.state, until + s(2), "probe", RULES)
    assert isinstance(again, Go) and again.probe and again.state is turn.state
    # Once the next instant has come, the first asker is the next probe, whoever it is.
    later = gate(turn.state, until + RULES.probe_every, "other", RULES)
    assert isinstance(later, Go) and later.probe and later.state.probe == "other"
    assert circuit_of(turn.state, until + RULES.probe_every) == Circuit.OPEN  # its probe's time is over


def test_a_late_asker_becomes_the_probe_at_its_own_instant() -> None:
    state = opened()
    at = NOW + s(42)
    turn = gate(state, at, "late", RULES)
    assert isinstance(turn, Go) and turn.probe and turn.state.open_until == at + RULES.probe_every


def test_a_failed_probe_keeps_it_open_for_another_period_and_a_successful_one_closes_it() -> None:
    state = opened()
    until = state.open_until
    assert until is not None
    turn = gate(state, until, "probe", RULES)
    assert isinstance(turn, Go)
    answer_at = until + s(3)
    still = failed(turn.state, answer_at, "probe")
    assert still.open_until == answer_at + RULES.probe_every and still.probe is None
    assert still.failures == FAILURES + 1 and circuit_of(still, answer_at) == Circuit.OPEN
    closed = succeeded(turn.state, answer_at, "probe")
    assert closed.open_until is None and circuit_of(closed, answer_at) == Circuit.CLOSED
    go = gate(closed, answer_at, "any", RULES)
    assert isinstance(go, Go) and not go.probe


def test_a_failure_while_open_never_brings_the_next_probe_forward() -> None:
    state = replace(opened(), open_until=NOW + s(30))  # held long by earlier failures
    assert failed(state, NOW + s(1)).open_until == NOW + s(30)


# -- any interleaving ------------------------------------------------------------------------------------------

HOLDERS = ["a", "b", "c"]
EVENTS = st.lists(
    st.tuples(
        # µs since the event before: within a probe period, or at the edges of the rules' periods
        st.one_of(
            st.integers(min_value=0, max_value=6_000_000),
            st.sampled_from([0, 1, 999_999, 5_000_000, 10_000_000, 300_000_001]),
        ),
        st.sampled_from(["ask", "ask", "fail", "fail", "fail", "succeed"]),
        st.sampled_from(HOLDERS),
    ),
    min_size=20,
    max_size=120,
)


@given(EVENTS)
def test_any_interleaving_sends_probes_probe_every_apart_and_a_closed_circuit_always_says_go(events) -> None:
    """Asks and answers of any holders at any non-decreasing instants. Each ends with failures that open the
    circuit, an ask it holds and two asks at its probe instants, so every example compares at least one pair of
    probes and sees a hold. A new probe (a Go that marks its holder) is never within probe_every of the one
    before; a redelivery goes only for the holder marked; a closed circuit says Go to everyone, unchanged; an open
    one says Go only to a probe, and holds the others to a later instant than the ask."""
    tail: list[tuple[int, str, str]] = [(0, "fail", "a")] * FAILURES
    tail += [(1, "ask", "c"), (10_000_000, "ask", "b"), (1, "fail", "b"), (10_000_000, "ask", "c")]
    state, now = DestinationState(), NOW
    probes: list[datetime] = []
    closed_asks = held = 0
    for gap, kind, holder in [(0, "ask", "a"), *events, *tail]:
        now += timedelta(microseconds=gap)
        if kind != "ask":
            state = answered(state, now, kind == "fail", holder, RULES)
            continue
        circuit = circuit_of(state, now)
        turn = gate(state, now, holder, RULES)
        if circuit == Circuit.CLOSED:
            assert isinstance(turn, Go) and not turn.probe and turn.state is state
            closed_asks += 1
        elif isinstance(turn, Held):
            assert state.open_until is not None and turn.until == state.open_until + RULES.answer_wait > now
            held += 1
        else:
            assert turn.probe
            if turn.state is state:  # a redelivery of the probe
                assert state.probe == holder and state.open_until is not None and now < state.open_until
            else:
                assert turn.state.probe == holder and turn.state.open_until == now + RULES.probe_every
                probes.append(now)
        state = turn.state if isinstance(turn, Go) else state
    compared = 0
    for a, b in zip(probes, probes[1:], strict=False):
        assert b - a >= RULES.probe_every
        compared += 1
    assert compared >= 1 and closed_asks >= 1 and held >= 1
