"""A collection's automatic spread (jobstate/auto_spread.py): the jobs of a second over their destination's budget
fire later, at most the tolerance later, the same plan whoever makes it; a second within its budget and the jobs
of other destinations keep their seconds; and the forecast counts what the spread makes of a herd."""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.jobstate.auto_spread import NOTHING_MOVED, SpreadPlan, planned
from shared.model import JobCollectionState
from shared.records import CollectionRecord, JobRecord
from tests.jobstate.test_forecast import NOW, collection, http, job, of
from tests.jobstate.test_occurrence_control_preview import stamp

HERD_AT = NOW + timedelta(minutes=10)
MINUTE = HERD_AT.replace(second=0)
RULE = {"host": "api.example.com", "requestsPerSecond": 50}


def herd(n: int, host: str = "api.example.com", at: datetime = HERD_AT, prefix: str = "h") -> list[JobRecord]:
    return [job(f"{prefix}{i}", startTime=stamp(at), action=http(host)) for i in range(n)]


def spread_collection(tolerance: str = "PT30S", **properties: Any) -> CollectionRecord:
    return collection(**{"targetRateLimits": [RULE], "autoSpread": {"tolerance": tolerance}, **properties})


def plan_of(record: CollectionRecord, jobs: list[JobRecord], learned: dict[str, float] | None = None) -> SpreadPlan:
    return planned(record, jobs, learned or {}, MINUTE, MINUTE + timedelta(minutes=1))


def seconds_of(plan: SpreadPlan, jobs: list[JobRecord], at: datetime = HERD_AT) -> Counter[int]:
    return Counter(int(plan.offset(j.key, at).total_seconds()) for j in jobs)


def test_a_herd_over_its_budget_fills_each_second_to_the_budget_within_the_tolerance() -> None:
    jobs = herd(1000)
    plan = plan_of(spread_collection(), jobs)
    assert seconds_of(plan, jobs) == {s: 50 for s in range(20)}
    shuffled = random.Random(7).sample(jobs, len(jobs))
    assert plan_of(spread_collection(), shuffled) == plan  # the same plan, whatever order the rows come in


def test_nothing_moves_without_autospread_in_a_quiet_second_or_at_another_destination() -> None:
    jobs = herd(1000)
    assert plan_of(collection(targetRateLimits=[RULE]), jobs) is NOTHING_MOVED
    assert plan_of(spread_collection(state=JobCollectionState.DISABLED), jobs) is NOTHING_MOVED
    assert plan_of(spread_collection(), herd(50)).moved == {}  # at the budget, not over it
    others = herd(300, host="other.example.net", prefix="o")
    plan = plan_of(spread_collection(), herd(60) + others)
    assert sum(plan.offset(j.key, HERD_AT) > timedelta(0) for j in others) == 0
    assert len(plan.moved) == 10  # only what the 51st and later of the ruled second are


def test_a_herd_longer_than_the_tolerance_is_spread_evenly_over_it() -> None:
    jobs = herd(1000)
    counts = seconds_of(plan_of(spread_collection("PT4S"), jobs), jobs)
    assert sorted(counts) == [0, 1, 2, 3, 4] and set(counts.values()) == {200}


def test_a_learned_budget_spreads_a_destination_without_a_rule() -> None:
    jobs = herd(40, host="quiet.example.org")
    assert plan_of(spread_collection(), jobs).moved == {}
    counts = seconds_of(plan_of(spread_collection(), jobs, {"quiet.example.org": 10.0}), jobs)
    assert counts == {0: 10, 1: 10, 2: 10, 3: 10}
    ruled = seconds_of(plan_of(spread_collection(), herd(40), {"api.example.com": 20.0}), herd(40))
    assert ruled == {0: 20, 1: 20}  # the lower of the rule and what the destination accepts


def test_an_every_minute_job_never_fires_after_its_next_occurrence() -> None:
    every = {"startTime": stamp(NOW), "recurrence": {"frequency": "Minute", "interval": 1}}
    jobs = [job(f"m{i}", **every) for i in range(200)]
    record = spread_collection("PT5M", targetRateLimits=[{"host": "api.example.com", "requestsPerSecond": 1}])
    plan = plan_of(record, jobs)
    offsets = [plan.offset(j.key, MINUTE) for j in jobs]
    assert max(offsets) == timedelta(seconds=59) and len(set(offsets)) == 60  # 200 over the minute's 60 seconds


def test_the_plan_counts_what_spilled_into_its_minute_from_the_minute_before() -> None:
    late = herd(1000, at=MINUTE - timedelta(seconds=10))  # fires 10 s before the minute, spills 10 s into it
    early = herd(50, at=MINUTE + timedelta(seconds=5), prefix="e")
    plan = plan_of(spread_collection(), late + early)
    assert seconds_of(plan, early, MINUTE + timedelta(seconds=5)) == {5: 50}  # after the spill's last second


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 200),
    rate=st.sampled_from([0.5, 1, 3, 10, 50, 120]),
    tolerance=st.integers(1, 60),
)
def test_no_second_exceeds_its_budget_when_the_tolerance_has_room(n: int, rate: float, tolerance: int) -> None:
    rule = {"host": "api.example.com", "requestsPerSecond": rate}
    record = collection(targetRateLimits=[rule], autoSpread={"tolerance": f"PT{tolerance}S"})
    jobs = herd(n)
    counts = seconds_of(plan_of(record, jobs), jobs)
    per_second = max(1, int(rate))
    assert sum(counts.values()) == n and max(counts) <= tolerance
    if n <= per_second * (tolerance + 1):
        assert max(counts.values()) <= per_second and sorted(counts) == list(range(len(counts)))
    else:
        assert len(counts) == tolerance + 1 and max(counts.values()) - min(counts.values()) <= 1


def test_the_forecast_counts_the_herd_as_the_spread_fires_it() -> None:
    jobs = herd(1000)
    plain = of(*jobs, targetRateLimits=[RULE])
    spread = of(*jobs, targetRateLimits=[RULE], autoSpread={"tolerance": "PT30S"})
    [crowded], [host] = plain.destinations, spread.destinations
    assert crowded.busiest.count == 1000 and crowded.over_limit_seconds == 1
    assert (host.busiest.count, host.over_limit_seconds, host.total) == (50, 0, 1000)
    assert [note.code for note in spread.notes] == ["AutoSpread"] and plain.notes == ()
