"""A host's rate limit as slots (jobstate/pacing.py), without storage: every request gets a slot of its own, 1/rate
apart, in the order asked for, however the reservations are split between instances; an idle host starts at
once; which rule paces a host."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import jobstate
from shared.model import TargetRateLimit

NOW = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)


def test_a_thousand_requests_at_50_per_second_get_a_thousand_slots_20_ms_apart() -> None:
    paced = jobstate.pace(None, 50, NOW, 1000)
    assert len(set(paced.slots)) == 1000 and list(paced.slots) == sorted(paced.slots)
    assert {b - a for a, b in zip(paced.slots, paced.slots[1:], strict=False)} == {timedelta(milliseconds=20)}
    assert paced.slots[0] == NOW and paced.last == NOW + timedelta(seconds=19.98)
    assert paced.next_free == NOW + timedelta(seconds=20)


@given(
    st.lists(st.integers(min_value=1, max_value=100), min_size=1, max_size=40),
    st.sampled_from([0.5, 3, 7, 50, 333, 1000]),
    st.integers(min_value=0, max_value=2**32),
)
def test_reservations_from_many_instances_never_share_or_crowd_a_slot(sizes, rate, seed) -> None:
    """Instances reserve batches of any size at any moment (each after reading the latest state, as the store's
    ETag loop guarantees): every slot is distinct, in the order reserved, and no two closer than 1/rate."""
    rng = random.Random(seed)
    state = None
    now = NOW
    slots: list[datetime] = []
    for k in sizes:
        now += timedelta(milliseconds=rng.randint(0, 500))
        paced = jobstate.pace(state, rate, now, k)
        assert paced.slots[0] >= now  # never before it was asked for
        slots += paced.slots
        state = paced.next_free
    gap = jobstate.pacing.spacing(rate) - timedelta(microseconds=1)  # rounding to the microsecond
    assert all(b - a >= gap for a, b in zip(slots, slots[1:], strict=False))
    assert len(slots) == sum(sizes)


def test_an_idle_host_starts_at_once_and_a_busy_one_queues_behind() -> None:
    busy = jobstate.pace(NOW + timedelta(seconds=5), 10, NOW, 2)
    assert busy.slots == (NOW + timedelta(seconds=5), NOW + timedelta(seconds=5.1))
    idle = jobstate.pace(NOW - timedelta(hours=1), 10, NOW, 1)
    assert idle.slots == (NOW,)
    with pytest.raises(ValueError):
        jobstate.pace(None, 0, NOW, 1)


RULES = [
    TargetRateLimit(host="api.example.com", requests_per_second=50),
    TargetRateLimit(host="*.example.com", requests_per_second=5),
    TargetRateLimit(host="*.eu.example.com", requests_per_second=2),
    TargetRateLimit(host="10.0.0.7", requests_per_second=1),
]


@pytest.mark.parametrize(
    ("host", "rule"),
    [
        ("api.example.com", "api.example.com"),
        ("API.Example.COM", "api.example.com"),  # hosts ignore case
        ("web.example.com", "*.example.com"),
        ("a.eu.example.com", "*.eu.example.com"),  # the longest domain wins
        ("example.com", None),  # *. is for subdomains only
        ("badexample.com", None),
        ("10.0.0.7", "10.0.0.7"),
        ("other.org", None),
    ],
)
def test_which_rule_paces_a_host(host, rule) -> None:
    found = jobstate.rule_for(host, RULES)
    assert (found.host if found else None) == rule
    if found is not None:
        assert jobstate.pacer_key(found) == found.host.lower()


@pytest.mark.parametrize(
    ("uri", "host"),
    [
        ("https://API.example.com:8443/x?y", "api.example.com"),
        ("http://10.0.0.7/", "10.0.0.7"),
        ("http://[::1]:80/", "::1"),
        ("http://[bad/", None),
    ],
)
def test_the_host_an_action_targets(uri, host) -> None:
    assert jobstate.target_host(uri) == host


@given(
    st.lists(st.floats(min_value=0, max_value=0.2), min_size=1, max_size=300),
    st.lists(st.floats(min_value=0, max_value=0.5), min_size=1, max_size=300),
    st.sampled_from([0.5, 3, 7.5, 50, 333]),
)
def test_on_the_wire_no_window_ever_holds_more_than_the_rate_whenever_requests_come(gaps, lateness, rate) -> None:
    """Requests come to the wire at any moment, their slots `share` of the rate apart and each up to 0.5 s late
    (a busy event loop, a slow connection): each goes at `send_at` (or later still), and then no window of
    the rule's holds more than n of them, none is closer than half a slot to the one before, none goes before
    its slot."""
    share = 0.98
    n, window = jobstate.window_of(rate, share)
    sent: list[float] = []
    now = 0.0
    for i, gap in enumerate(gaps):
        slot = i / (rate * share)
        now = max(now + gap, slot + lateness[i % len(lateness)])  # when it reaches the wire
        at = jobstate.send_at(sent, rate, share, now, slot)
        assert at >= max(now, slot)
        sent.append(at)
        now = at
    assert all(b - a >= 0.5 / (rate * share) - 1e-9 for a, b in zip(sent, sent[1:], strict=False))
    assert all(sent[i + n] - sent[i] >= window - 1e-9 for i in range(len(sent) - n))
    assert n == max(1, int(rate))
    if rate == int(rate):  # a whole rate: never more than it in any one second
        assert window >= 1.0


def test_on_the_wire_requests_on_time_go_at_their_slots_and_late_ones_catch_up_within_a_window() -> None:
    rate, share = 50, 0.98
    step = 1 / (rate * share)
    sent: list[float] = []
    for i in range(60):  # on time: at its slot
        assert jobstate.send_at(sent, rate, share, i * step - 0.05, i * step) == pytest.approx(i * step)
        sent.append(i * step)
    # 30 slots missed (a stall of 0.6 s): the late ones go half a slot apart until the window is full again.
    late = 90 * step
    first = jobstate.send_at(sent, rate, share, late, 60 * step)
    assert first == pytest.approx(late)
    second = jobstate.send_at([*sent, first], rate, share, late, 61 * step)
    assert second == pytest.approx(late + step / 2)
