"""A destination that pushes back (jobstate/pushback.py), without storage: what a 429 or 503 makes of its budget
(the first sets it from what the destination was seen to accept, a push-back of an unpaced request only raises it,
one of a paced request halves it once per EPISODE) and of its hold (the Retry-After, never past the deadline);
the slots `reserve` hands out (1/rate apart, never before the hold or the asking instant, never overlapping); how
the budget widens and is forgotten; which destination an action's request goes to."""

from __future__ import annotations

import bisect
import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.jobstate.pushback import (
    DEFAULT_HOLD,
    EPISODE,
    FLOOR_RATE,
    PUSHED_SHARE,
    WIDEN,
    DestinationState,
    destination_key,
    learned,
    pushed_back,
    reserve,
    widened,
)
from shared.keys import JobKey
from shared.model import JobErrorAction
from shared.occurrence import OccurrenceMessage, PollState

NOW = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
DEADLINE = timedelta(hours=1)
QUIET = timedelta(seconds=30)
FORGET = timedelta(minutes=5)
US = timedelta(microseconds=1)


def s(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


def first(accepted: int = 50, retry_after: float | None = 5.0, status: int = 429) -> DestinationState:
    return pushed_back(DestinationState(), NOW, status, accepted, retry_after, DEADLINE, paced=False)


# -- the first push-back ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accepted", "rate"),
    [(50, 45.0), (1000, 900.0), (1, 0.9), (0, FLOOR_RATE)],
    ids=["herd", "fast", "one", "none-seen: the floor"],
)
def test_the_first_push_back_sets_the_budget_to_a_share_of_what_the_destination_accepted(accepted, rate) -> None:
    state = first(accepted)
    assert state.rate == pytest.approx(rate) and state.rate == max(FLOOR_RATE, accepted * PUSHED_SHARE)
    assert state.pushed_at == NOW and state.episode_at == NOW and state.last_status == 429
    assert state.widened_at is None and not state.clear


@pytest.mark.parametrize(
    ("retry_after", "hold"),
    [
        (5.0, s(5)),
        (0.25, s(0.25)),
        (None, DEFAULT_HOLD),
        (0.0, DEFAULT_HOLD),  # "now" (a date already past reads as 0): held as if none were named
        (7200.0, DEADLINE),  # never beyond the deadline
        (3600.0, DEADLINE),
    ],
    ids=["seconds", "fraction", "none", "zero", "past-deadline", "at-deadline"],
)
def test_a_push_back_holds_the_destination_until_its_retry_after_never_beyond_the_deadline(retry_after, hold) -> None:
    state = first(retry_after=retry_after, status=503)
    assert state.hold_until == NOW + hold and state.next_free == NOW + hold and state.last_status == 503


def test_a_later_push_back_with_a_shorter_retry_after_keeps_the_longer_hold_and_the_pacer_ahead_of_it() -> None:
    state, _ = reserve(first(retry_after=10), NOW, 200)  # the pacer 200 slots past the hold
    assert state.next_free is not None and state.next_free > NOW + s(10)
    again = pushed_back(state, NOW + s(1), 429, 50, 2.0, DEADLINE, paced=False)
    assert again.hold_until == NOW + s(10) and again.next_free == state.next_free
    longer = pushed_back(state, NOW + s(1), 429, 50, 60.0, DEADLINE, paced=False)
    assert longer.hold_until == longer.next_free == NOW + s(61)  # a hold past the pacer moves it


# -- later push-backs ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accepted", "rate"), [(10, 45.0), (50, 45.0), (60, 54.0), (0, 45.0)], ids=["fewer", "same", "more", "none"]
)
def test_a_push_back_of_an_unpaced_request_only_raises_the_budget(accepted, rate) -> None:
    state = pushed_back(first(50), NOW + s(3), 429, accepted, 1.0, DEADLINE, paced=False)
    assert state.rate == pytest.approx(rate) and state.episode_at == NOW and state.pushed_at == NOW + s(3)


@pytest.mark.parametrize(
    ("after", "rate", "episode"),
    [
        (s(0.5), 45.0, NOW),  # the same burst
        (EPISODE, 45.0, NOW),  # its last instant
        (EPISODE + US, 22.5, NOW + EPISODE + US),
        (s(30), 22.5, NOW + s(30)),
    ],
    ids=["within", "at-episode", "just-after", "later"],
)
def test_a_push_back_of_a_paced_request_halves_the_budget_once_per_episode(after, rate, episode) -> None:
    state = pushed_back(first(50), NOW + after, 429, 999, 1.0, DEADLINE, paced=True)
    assert state.rate == pytest.approx(rate) and state.episode_at == episode


def test_paced_push_backs_of_one_burst_halve_it_once_and_never_below_the_floor() -> None:
    state = pushed_back(first(50), NOW + s(2), 429, 0, 1.0, DEADLINE, paced=True)
    for ms in (100, 400, 900, 1000):
        state = pushed_back(state, NOW + s(2) + timedelta(milliseconds=ms), 429, 0, 1.0, DEADLINE, paced=True)
    assert state.rate == pytest.approx(22.5) and state.episode_at == NOW + s(2)
    low = first(0)
    for k in range(1, 4):
        low = pushed_back(low, NOW + s(2 * k), 429, 0, 1.0, DEADLINE, paced=True)
        assert low.rate == FLOOR_RATE


def test_a_push_back_after_the_budget_was_forgotten_starts_again_from_what_was_accepted() -> None:
    forgotten = widened(first(50), NOW + FORGET, QUIET, FORGET)
    assert forgotten.rate is None and forgotten.clear
    again = pushed_back(forgotten, NOW + FORGET + s(1), 429, 10, None, DEADLINE, paced=True)
    assert again.rate == pytest.approx(9.0) and again.episode_at == NOW + FORGET + s(1)


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=3_000_000),  # µs since the previous push-back
            st.integers(min_value=0, max_value=2000),  # accepted
            st.one_of(st.none(), st.floats(min_value=-5, max_value=10_000)),  # Retry-After
            st.booleans(),  # paced
        ),
        min_size=2,
        max_size=40,
    )
)
def test_any_push_backs_keep_the_budget_rules(events) -> None:
    """Push-backs at any non-decreasing instants: the budget is never below the floor; an unpaced push-back never
    lowers it; a paced one lowers it to half at most, and two lowerings are more than EPISODE apart; the hold
    never shrinks, never lies past `deadline` from the push-back that set it, and the pacer is never before it."""
    state, now = DestinationState(), NOW
    lowered: list[datetime] = []
    compared = 0
    for gap, accepted, retry_after, paced in events:
        now += timedelta(microseconds=gap)
        after = pushed_back(state, now, 429, accepted, retry_after, DEADLINE, paced)
        assert after.rate is not None and after.rate >= FLOOR_RATE
        assert after.hold_until is not None and after.next_free is not None
        assert now <= after.hold_until <= now + DEADLINE
        assert after.next_free >= after.hold_until
        if state.rate is not None:
            assert state.hold_until is not None and after.hold_until >= state.hold_until
            if not paced:
                assert after.rate >= state.rate
            elif after.rate < state.rate:
                assert after.rate == max(FLOOR_RATE, state.rate / 2)
                lowered.append(now)
            compared += 1
        state = after
    assert all(b - a > EPISODE for a, b in zip(lowered, lowered[1:], strict=False))
    assert compared == len(events) - 1  # every push-back after the first was held to the rules


# -- reserve ---------------------------------------------------------------------------------------------------


def test_without_a_budget_every_request_goes_now_and_nothing_changes() -> None:
    state = DestinationState(failures=2)
    assert reserve(state, NOW, 3) == (state, [NOW, NOW, NOW])


def test_slots_start_at_the_hold_one_over_the_rate_apart_and_the_next_reservation_follows() -> None:
    state = replace(first(10, retry_after=2.0), rate=10.0)
    state, slots = reserve(state, NOW, 3)
    assert slots == [NOW + s(2), NOW + s(2.1), NOW + s(2.2)] and state.next_free == NOW + s(2.3)
    state, more = reserve(state, NOW + s(1), 2)
    assert more == [NOW + s(2.3), NOW + s(2.4)]


def test_a_reservation_after_an_idle_spell_starts_at_once_and_never_before_the_hold() -> None:
    state = replace(first(10, retry_after=2.0), rate=10.0)
    state, _ = reserve(state, NOW, 1)
    state, late = reserve(state, NOW + s(60), 2)
    assert late == [NOW + s(60), NOW + s(60.1)]
    held = replace(state, hold_until=NOW + s(90))  # a push-back since: its hold comes first
    _, slots = reserve(held, NOW + s(61), 1)
    assert slots == [NOW + s(90)]


@given(
    st.floats(min_value=FLOOR_RATE, max_value=1000),
    st.one_of(st.none(), st.floats(min_value=0, max_value=30)),
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=2_000_000), st.integers(min_value=1, max_value=20)),
        min_size=2,
        max_size=60,
    ),
    st.floats(min_value=0.001, max_value=20),
)
def test_reservations_never_overlap_never_precede_the_hold_or_their_asking_and_keep_the_rate(
    rate, retry_after, asks, window
) -> None:
    """Reservations of any size at non-decreasing instants (each on the state the one before left, as the row's
    ETag loop guarantees): their slots strictly increase, at least 1/rate apart (less a microsecond of rounding),
    none before the hold or the instant it was asked at; and no window of T seconds holds more than
    ceil(rate * T) + 1 of them (slots within one reservation are exact; each reservation may round its end by
    half a microsecond, which 60 of them cannot make a slot of: see the long-backlog test below)."""
    state = replace(first(10, retry_after=retry_after), rate=rate)
    assert state.hold_until is not None
    now, slots = NOW, []
    for gap, k in asks:
        now += timedelta(microseconds=gap)
        state, got = reserve(state, now, k)
        assert len(got) == k and got[0] >= now and got[0] >= state.hold_until
        assert state.next_free is not None and state.next_free > got[-1]
        slots += got
    gap_at_least = timedelta(seconds=1 / rate) - US
    compared = 0
    for a, b in zip(slots, slots[1:], strict=False):
        assert b > a and b - a >= gap_at_least
        compared += 1
    span, most = timedelta(seconds=window), math.ceil(rate * window) + 1
    for i, start in enumerate(slots):
        assert bisect.bisect_right(slots, start + span) - i <= most  # the closed window [start, start + T]
    assert compared == len(slots) - 1 >= 1


def test_a_long_backlog_of_single_reservations_keeps_the_rate_over_a_long_window() -> None:
    rate = 999.51
    state = replace(first(10, retry_after=None), rate=rate)
    slots: list[datetime] = []
    for _ in range(10_001):
        state, got = reserve(state, NOW, 1)  # as the executor reserves: one slot per ask
        slots += got
    span = s(10)
    most = max(bisect.bisect_right(slots, start + span) - i for i, start in enumerate(slots))
    assert most <= math.ceil(rate * 10) + 1


# -- widening and forgetting -----------------------------------------------------------------------------------


def test_the_budget_widens_by_a_quarter_per_quiet_period_and_is_forgotten_after_forget() -> None:
    state = first(40)  # 36/s
    assert widened(state, NOW + QUIET - US, QUIET, FORGET) is state
    rate = 36.0
    at = NOW
    while at + QUIET < NOW + FORGET:
        at += QUIET
        assert widened(state, at - US, QUIET, FORGET) is state  # not before the period is over
        state = widened(state, at, QUIET, FORGET)
        rate *= WIDEN
        assert state.rate == pytest.approx(rate) and state.widened_at == at
    assert rate == pytest.approx(36.0 * WIDEN**9)
    assert widened(state, NOW + FORGET - US, QUIET, FORGET) is state  # 30 s less a microsecond since the last
    gone = widened(state, NOW + FORGET, QUIET, FORGET)
    assert gone.rate is None and gone.next_free is None and gone.hold_until is None
    assert gone.episode_at is None and gone.widened_at is None and gone.clear
    assert gone.pushed_at == NOW and gone.last_status == 429  # what happened last stays readable


def test_a_push_back_stops_the_widening_and_counts_its_quiet_from_itself() -> None:
    state = widened(first(40), NOW + QUIET, QUIET, FORGET)
    again = pushed_back(state, NOW + QUIET + s(1), 429, 0, 1.0, DEADLINE, paced=False)
    assert again.widened_at is None and again.rate == state.rate
    assert widened(again, NOW + 2 * QUIET, QUIET, FORGET) is again  # 29 s after it: not yet
    assert widened(again, NOW + 2 * QUIET + s(1), QUIET, FORGET).rate == pytest.approx(state.rate * WIDEN)


def test_widening_leaves_a_destination_without_a_budget_alone() -> None:
    failing = DestinationState(failures=3, failed_at=NOW)
    assert widened(failing, NOW + FORGET * 2, QUIET, FORGET) is failing
    assert not failing.clear and DestinationState().clear


def test_a_budget_read_after_several_quiet_periods_has_widened_once_per_period() -> None:
    state = widened(first(40), NOW + 3 * QUIET, QUIET, FORGET)
    assert state.rate == pytest.approx(36.0 * WIDEN**3)


# -- the destination of a request ------------------------------------------------------------------------------


def http(uri: str) -> JobErrorAction:
    return JobErrorAction.model_validate({"type": "Https", "request": {"uri": uri, "method": "POST"}})


@pytest.mark.parametrize(
    ("uri", "destination"),
    [
        ("https://api.example.com/hook", "api.example.com"),
        ("https://API.Example.COM:8443/x?y=1", "api.example.com:8443"),  # the port kept, the case folded
        ("http://127.0.0.1:8080/", "127.0.0.1:8080"),
        ("http://example.com:80/", "example.com:80"),  # a port named, even the default one, is kept
        ("http://example.com./", "example.com"),  # the root's dot
        ("http://[2001:DB8::1]/", "[2001:db8::1]"),  # an address by its canonical text, bracketed
        ("https://Bücher.example/", "xn--bcher-kva.example"),  # as the HTTP client sends it
        ("http://[bad/", None),
        ("http://host:port/", None),
        ("http://host:99999/", None),
        ("not a uri", None),
        ("http:///path-only", None),
    ],
)
def test_the_destination_of_an_http_request(uri, destination) -> None:
    assert destination_key(http(uri)) == destination


def test_an_ipv6_destination_with_a_port_is_told_from_another_address() -> None:
    assert destination_key(http("http://[::1]:8080/")) != destination_key(http("http://[::1:8080]/"))


def test_a_poll_goes_to_its_locations_host() -> None:
    message = OccurrenceMessage(JobKey("s", "g", "c", "j"), NOW, NOW)
    poll = PollState("https://Status.Example.NET:9443/op/1", False, NOW, NOW, NOW)
    assert destination_key(http("https://api.example.com/"), message) == "api.example.com"
    assert destination_key(http("https://api.example.com/"), message.polled(poll, NOW)) == "status.example.net:9443"


@pytest.mark.parametrize(
    ("action", "destination"),
    [
        (
            {"type": "StorageQueue", "queueMessage": {"storageAccount": "MyAccount", "queueName": "q"}},
            "queue:myaccount",
        ),
        (
            {"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "Contoso-Bus", "queueName": "q"}},
            "servicebus:contoso-bus",
        ),
        (
            {"type": "ServiceBusTopic", "serviceBusTopicMessage": {"namespace": "contoso-bus", "topicPath": "t"}},
            "servicebus:contoso-bus",
        ),
        ({"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "", "queueName": "q"}}, None),
        ({"type": "ServiceBusQueue", "serviceBusQueueMessage": {"queueName": "q"}}, None),
        ({"type": "Http"}, None),  # no request: nothing is sent
    ],
    ids=["storage-queue", "bus-queue", "bus-topic", "bus-empty-namespace", "bus-no-namespace", "http-no-request"],
)
def test_the_destination_of_a_queue_or_bus_message(action: dict[str, Any], destination) -> None:
    assert destination_key(JobErrorAction.model_validate(action)) == destination


# -- learning while the hold lasts -----------------------------------------------------------------------------


def test_successes_while_the_hold_lasts_raise_the_budget_and_after_it_do_not() -> None:
    """A target whose successes come back after its 429s: the first push-back saw none accepted (the floor), the
    successes answered during the Retry-After raise it to what the target took."""
    state = first(0)  # nothing accepted seen yet: FLOOR_RATE
    assert state.rate == pytest.approx(FLOOR_RATE) and state.hold_until == NOW + s(5)
    raised = learned(state, NOW + s(1), 50)
    assert raised.rate == pytest.approx(50 * PUSHED_SHARE) and raised.hold_until == state.hold_until
    assert learned(raised, NOW + s(2), 10) is raised  # a lower count never lowers it
    assert learned(raised, NOW + s(5), 60).rate == pytest.approx(60 * PUSHED_SHARE)  # the hold's last instant
    assert learned(raised, NOW + s(5) + US, 80) is raised  # after the hold: only push-backs and quiet change it
    assert learned(DestinationState(), NOW, 80) == DestinationState()  # no budget: nothing to learn
