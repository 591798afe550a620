"""An occurrence queued before an outage that reaches the executor missed (jobstate/late.py), without storage: its
job's missed-run policy decides it as the dispatcher decides the occurrences it finds missed. Skip runs none,
Latest only the latest due (Postponed into it otherwise), All those within its window and maxRuns; only a
scheduled occurrence's first attempt counts, lateness from its message's own second, MISSED_AFTER exactly is
not missed; a let-go series end completes the job; together with the dispatcher's catch-up the rule is the
dispatcher's own."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared import jobstate
from shared.keys import JobKey
from shared.model import (
    JobExecutionStatus,
    JobHistoryActionName,
    JobProperties,
    JobState,
    LedgerReason,
    MissedRunType,
)
from shared.occurrence import OccurrenceMessage, PollState, Trigger
from shared.records import JobRecord

MIN = timedelta(minutes=1)
SECOND = timedelta(seconds=1)
T = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)  # the occurrence queued before the outage
GENERATION = 7
SKIP = {"type": "Skip"}
LATEST = {"type": "Latest"}


def job(
    policy: dict[str, Any] | None = None,
    start: datetime = T - timedelta(days=1),
    recurrence: dict[str, Any] | None = None,
    **extra: Any,
) -> JobRecord:
    """An Enabled job whose occurrence at `T` (or another) was queued; the dispatcher moved on past it."""
    properties = JobProperties.model_validate(
        {
            "action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
            "startTime": start.isoformat(),
            **({"recurrence": recurrence or {"frequency": "Minute"}} if recurrence != {} else {}),
            **({"missedRunPolicy": policy} if policy else {}),
            **extra,
        }
    )
    record = JobRecord(
        JobKey("s", "g", "c", "j"), properties, created_time=start, count_origin=start, generation=GENERATION
    )
    return replace(record, state=JobState.ENABLED)


def queued(occurrence: datetime = T, due: datetime | None = None, **changes: Any) -> OccurrenceMessage:
    message = OccurrenceMessage(
        JobKey("s", "g", "c", "j"), occurrence, due or occurrence, Trigger.SCHEDULE, generation=GENERATION
    )
    return replace(message, **changes)


def decided(record: JobRecord, message: OccurrenceMessage, now: datetime) -> jobstate.LetGo | None:
    return jobstate.let_go_late(record, message, now)


# -- on time, and the threshold ------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", [SKIP, LATEST, None, {"type": "All"}])
def test_an_occurrence_exactly_missed_after_late_is_not_missed_and_runs(policy) -> None:
    assert jobstate.MISSED_AFTER == 2 * MIN
    for late in (timedelta(0), SECOND, jobstate.MISSED_AFTER - SECOND, jobstate.MISSED_AFTER):
        assert decided(job(policy), queued(), T + late) is None


def test_one_microsecond_past_missed_after_is_missed() -> None:
    let_go = decided(job(SKIP), queued(), T + jobstate.MISSED_AFTER + timedelta(microseconds=1))
    assert let_go == jobstate.LetGo(MissedRunType.SKIP, LedgerReason.SKIPPED_BY_POLICY, T + 2 * MIN)


# -- each policy -----------------------------------------------------------------------------------------------


def test_skip_runs_no_missed_occurrence() -> None:
    for now in (T + 2 * MIN + SECOND, T + 3 * MIN + 23 * SECOND, T + timedelta(days=3)):
        let_go = decided(job(SKIP), queued(), now)
        assert let_go is not None and let_go.reason == LedgerReason.SKIPPED_BY_POLICY
        assert let_go.policy == MissedRunType.SKIP


@pytest.mark.parametrize("policy", [LATEST, None], ids=["Latest", "no policy"])
def test_latest_postpones_it_into_the_latest_occurrence_due(policy) -> None:
    let_go = decided(job(policy), queued(), T + 3 * MIN + 23 * SECOND)
    assert let_go == jobstate.LetGo(MissedRunType.LATEST, LedgerReason.POSTPONED, T + 3 * MIN)


@pytest.mark.parametrize("policy", [LATEST, None], ids=["Latest", "no policy"])
def test_latest_runs_it_when_it_is_itself_the_latest_due(policy) -> None:
    every_five = {"frequency": "Minute", "interval": 5}
    assert decided(job(policy, recurrence=every_five), queued(), T + 4 * MIN + 59 * SECOND) is None
    let_go = decided(job(policy, recurrence=every_five), queued(), T + 5 * MIN)  # the next one is due now
    assert let_go is not None and let_go.latest == T + 5 * MIN


@pytest.mark.parametrize(
    ("policy", "now", "runs"),
    [
        ({"type": "All"}, T + 3 * MIN + 23 * SECOND, True),  # 3 later ones due: within the default cap of 10
        ({"type": "All", "maxRuns": 4}, T + 3 * MIN + 23 * SECOND, True),  # itself and 3 later: 4
        ({"type": "All", "maxRuns": 3}, T + 3 * MIN + 23 * SECOND, False),  # the 3 later ones are the latest 3
        ({"type": "All", "window": "PT3M23S"}, T + 3 * MIN + 23 * SECOND, True),  # exactly the window old
        ({"type": "All", "window": "PT3M22S"}, T + 3 * MIN + 23 * SECOND, False),  # a second older than it
        ({"type": "All"}, T + timedelta(days=1, seconds=1), False),  # the default window, P1D
        ({"type": "All", "maxRuns": 100, "window": "P2D"}, T + 99 * MIN + 30 * SECOND, True),
        ({"type": "All", "maxRuns": 100, "window": "P2D"}, T + 100 * MIN + 30 * SECOND, False),
    ],
)
def test_all_runs_it_within_its_window_and_max_runs(policy, now, runs) -> None:
    let_go = decided(job(policy), queued(), now)
    if runs:
        assert let_go is None
    else:
        assert let_go is not None and let_go.reason == LedgerReason.SKIPPED_BY_POLICY
        assert let_go.policy == MissedRunType.ALL


# -- which attempts, and from when -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"trigger": Trigger.RUN_NOW},
        {"trigger": Trigger.BACKFILL},
        {"attempt": 1},  # a retry
        {"action": JobHistoryActionName.ERROR_ACTION},
        {"poll": PollState("http://127.0.0.1/op", False, T, T, T)},
    ],
    ids=["run-now", "backfill", "retry", "error action", "poll"],
)
def test_only_a_scheduled_occurrences_first_attempt_is_decided(changes) -> None:
    assert decided(job(SKIP), queued(**changes), T + timedelta(hours=1)) is None
    assert decided(job(SKIP), queued(), T + timedelta(hours=1)) is not None


def test_lateness_counts_from_the_messages_own_second() -> None:
    # An All catch-up is queued at the dispatch's now, one second apart: on time, whatever its occurrence.
    catch_up = queued(T, due=T + 10 * MIN)
    assert decided(job({"type": "All"}), catch_up, T + 10 * MIN + 30 * SECOND) is None
    # So is an occurrence that waited for a limit (queued again for a slot, its first fire instant kept).
    waited = queued(T, due=T + 4 * MIN, first_due=T)
    assert decided(job(SKIP), waited, T + 4 * MIN + SECOND) is None
    # ... and the catch-up that itself comes missed (the service went down again) is decided too.
    assert decided(job({"type": "All", "maxRuns": 3}), catch_up, T + 13 * MIN) is not None


def test_a_spread_job_is_late_from_its_fire_instant_and_its_latest_is_nominal() -> None:
    record = job(SKIP, spreadWindow="PT1M")
    offset = jobstate.offset_of(record)
    assert offset > timedelta(0)  # the job's name lands it inside the window
    fire = T + offset
    assert decided(record, queued(T, due=fire), fire + jobstate.MISSED_AFTER) is None
    latest = replace(record, properties=job(LATEST, spreadWindow="PT1M").properties)
    let_go = decided(latest, queued(T, due=fire), fire + 3 * MIN - SECOND)  # T + 3 min fires after now
    assert let_go is not None and let_go.latest == T + 2 * MIN


# -- calendars: DST-free (UTC) month ends, and a DST change -----------------------------------------------------


def test_the_last_day_of_february_is_the_latest_on_the_first_of_march() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    month_end = {"frequency": "Month", "schedule": {"monthDays": [-1], "hours": [23], "minutes": [59]}}
    occurrence = datetime(2026, 2, 28, 23, 59, tzinfo=UTC)
    now = datetime(2026, 3, 1, 0, 3, tzinfo=UTC)  # 4 minutes late, across the month's end
    assert decided(job(LATEST, start, month_end), queued(occurrence), now) is None  # itself the latest: it runs
    assert decided(job({"type": "All"}, start, month_end), queued(occurrence), now) is None
    skipped = decided(job(SKIP, start, month_end), queued(occurrence), now)
    assert skipped is not None and skipped.latest == occurrence


def test_a_daily_occurrence_on_the_31st_is_postponed_into_the_1st() -> None:
    start = datetime(2026, 1, 1, 23, 59, tzinfo=UTC)
    daily = {"frequency": "Day"}
    occurrence = datetime(2026, 1, 31, 23, 59, tzinfo=UTC)
    now = datetime(2026, 2, 2, 0, 5, tzinfo=UTC)
    let_go = decided(job(LATEST, start, daily), queued(occurrence), now)
    assert let_go == jobstate.LetGo(
        MissedRunType.LATEST, LedgerReason.POSTPONED, datetime(2026, 2, 1, 23, 59, tzinfo=UTC)
    )
    within = decided(job({"type": "All", "window": "P2D"}, start, daily), queued(occurrence), now)
    assert within is None
    assert decided(job({"type": "All", "window": "P1D"}, start, daily), queued(occurrence), now) is not None


def test_across_a_spring_forward_gap_the_latest_is_the_shifted_occurrence() -> None:
    start = datetime(2026, 3, 20, 1, 30, tzinfo=UTC)  # 02:30 in Berlin (UTC+1)
    daily = {"frequency": "Day", "timeZone": "Europe/Berlin", "schedule": {"hours": [2], "minutes": [30]}}
    occurrence = datetime(2026, 3, 28, 1, 30, tzinfo=UTC)  # 02:30 CET
    gap = datetime(2026, 3, 29, 1, 0, tzinfo=UTC)  # 02:30 does not exist on the 29th: 03:00 CEST
    record = job(LATEST, start, daily)
    assert jobstate.series_of(record).following(occurrence) == gap
    assert decided(record, queued(occurrence), gap - SECOND) is None  # the next one is not due yet
    assert decided(record, queued(occurrence), gap + 3 * MIN) == jobstate.LetGo(
        MissedRunType.LATEST, LedgerReason.POSTPONED, gap
    )


# -- a one-shot, a series' end, and the ledger -----------------------------------------------------------------


def test_a_one_shot_let_go_completes_its_job_and_latest_runs_it() -> None:
    one_shot = job(SKIP, start=T, recurrence={})
    let_go = decided(one_shot, queued(), T + 5 * MIN)
    assert let_go is not None and let_go.latest == T
    after = jobstate.completed(one_shot, queued())
    assert after is not None and after.state == JobState.COMPLETED
    assert decided(job(None, start=T, recurrence={}), queued(), T + 5 * MIN) is None  # Latest: it is the latest


def test_only_the_last_occurrence_of_the_series_let_go_completes_the_job() -> None:
    counted = job(SKIP, start=T - 4 * MIN, recurrence={"frequency": "Minute", "count": 5})  # T - 4 min .. T
    assert decided(counted, queued(), T + 3 * MIN) is not None
    after = jobstate.completed(counted, queued())
    assert after is not None and after.state == JobState.COMPLETED
    assert jobstate.completed(counted, queued(T - MIN)) is None  # one follows it
    assert jobstate.completed(replace(counted, next_execution_time=T + MIN), queued()) is None  # planned on
    assert jobstate.completed(replace(counted, generation=GENERATION + 1), queued()) is None  # redefined since
    assert jobstate.completed(replace(counted, state=JobState.DISABLED), queued()) is None


@pytest.mark.parametrize(
    ("policy", "status", "says"),
    [
        (SKIP, JobExecutionStatus.SKIPPED, "skipped by the missed-run policy Skip"),
        (None, JobExecutionStatus.POSTPONED, "the Latest missed-run policy ran the latest missed occurrence, "),
        (
            {"type": "All", "maxRuns": 2},
            JobExecutionStatus.SKIPPED,
            "the missed-run policy All runs the latest 2 missed occurrences",
        ),
    ],
)
def test_the_ledger_entry_names_the_policy(policy, status, says) -> None:
    record, now = job(policy), T + 3 * MIN + 23 * SECOND
    let_go = decided(record, queued(), now)
    assert let_go is not None
    entry = jobstate.let_go_queued(record, T, let_go, now)
    assert (entry.occurrence, entry.status, entry.reason) == (T, status, let_go.reason)
    assert says in entry.message and entry.trigger == Trigger.SCHEDULE.value
    assert entry.execution_id == queued().execution_id  # the occurrence's own identity, as its attempt's
    if policy is None:
        assert entry.message.endswith("occurrence, 2026-03-04T10:03:00Z, in its place.")


# -- together with the dispatcher's catch-up: the dispatcher's own rule ------------------------------------------


@pytest.mark.parametrize(
    "policy",
    [SKIP, LATEST, None, {"type": "All"}, {"type": "All", "maxRuns": 3}, {"type": "All", "window": "PT5M"}],
)
@pytest.mark.parametrize("outage", [3, 4, 7, 12])
def test_with_the_dispatchers_catch_up_what_runs_is_what_the_dispatcher_would_have_run(policy, outage) -> None:
    """The dispatcher queued T (a minute ahead) and moved the job on to T + 1 min; the service stops, and at
    `outage` minutes (and a half) later the executor receives T and the dispatcher catches up from T + 1 min.
    What both run is what one dispatch that had found T missed would have run."""
    record = replace(job(policy), next_execution_time=T + MIN, dispatched_occurrence=T)
    now = T + outage * MIN + 30 * SECOND
    step = jobstate.dispatch_step(record, T + MIN, now)
    assert step.catch_up is not None  # T + 1 min is missed too
    ran = set(step.queued) | ({T} if decided(record, queued(), now) is None else set())
    assert sorted(ran) == list(jobstate.dispatch_step(record, T, now).queued)
