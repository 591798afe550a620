"""A queued occurrence that reaches its second missed: the missed-run policy, as the executor applies it. Pure.

The dispatcher works a minute ahead, so when the service stops, the next occurrence of a job is often queued
already; on recovery it reaches the executor minutes late, and the dispatcher's catch-up (missed.py) never saw
it: that one starts at the job's `next_execution_time`, after it. So the executor applies the job's
`missedRunPolicy` to it exactly as the dispatcher would have had it found it missed (`catch_up` with it as the
first missed occurrence, at the executor's now; docs/decisions.md, "Missed runs, backfill, the ledger"):
- Latest (the default, and 2016-03-01's rule): it runs only when it is itself the latest occurrence of its series
  due by now; else it is Postponed into that latest one, which the dispatcher's catch-up (or a message queued
  later) runs;
- Skip: it does not run (SkippedByPolicy);
- All: it runs when it is at most `window` old and among the latest `maxRuns` occurrences due by now; else
  SkippedByPolicy (the dispatcher's catch-up runs the later ones: together no more than `maxRuns` run).

Which attempts: a scheduled occurrence's first attempt of its main action (not a poll of it, not a retry, not an
error action, not run-now or backfill), whose message reaches its second more than MISSED_AFTER late. Lateness
counts from the message's own second (`due`: the occurrence's fire instant, or the instant an All catch-up or a
wait queued it for), so a catch-up or a waiter that comes on time is never missed. An on-time attempt costs a
comparison: `let_go_late` then reads nothing but the message and now.

An occurrence let go that was the last of its job's series leaves nothing to complete the job: `completed` says
what the job becomes (Completed, as the dispatcher's `advanced` does when a policy lets a series' end go).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from ..model import JobHistoryActionName, JobState, LedgerReason, MissedRunType
from ..occurrence import OccurrenceMessage
from ..records import JobRecord
from .missed import catch_up, is_missed
from .series import keep_series, series_of
from .spread import offset_of


@dataclass(frozen=True)
class LetGo:
    """A queued occurrence its job's missed-run policy does not run, and why."""

    policy: MissedRunType
    reason: LedgerReason  # Postponed (Latest) or SkippedByPolicy (Skip; All past its window or its maxRuns)
    latest: datetime  # the latest occurrence of the series due by now (under Latest it runs in this one's place)


def applies(message: OccurrenceMessage) -> bool:
    """The attempt starts a scheduled occurrence: the only kind a missed-run policy decides about."""
    return (
        message.scheduled  # a replay of a dead letter runs when asked for, however old its occurrence
        and message.action == JobHistoryActionName.MAIN_ACTION
        and message.attempt == 0
        and message.poll is None
    )


def let_go_late(job: JobRecord, message: OccurrenceMessage, now: datetime) -> LetGo | None:
    """None when the attempt runs (on time, not a scheduled first attempt, or its policy runs it); else why not."""
    if not is_missed(message.due, now) or not applies(message):
        return None
    # As the dispatcher sees a spread job: its series shifted by the offset, at now (plan.py `dispatch_step`).
    caught = catch_up(series_of(job), job.properties.missed_run_policy, message.occurrence, now - offset_of(job), 0)
    if caught is None or message.occurrence in caught.runs:
        return None
    return LetGo(caught.policy, caught.reason, caught.latest)


def completed(job: JobRecord, message: OccurrenceMessage) -> JobRecord | None:
    """The job Completed when the occurrence let go was the last of its series (the job is still the definition it
    was queued for, Enabled, with nothing planned after it); None when nothing changes."""
    last = job.next_execution_time is None and series_of(job).following(message.occurrence) is None
    if job.state != JobState.ENABLED or job.generation != message.generation or not last:
        return None
    return keep_series(job, replace(job, state=JobState.COMPLETED))
