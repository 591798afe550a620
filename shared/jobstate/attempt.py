"""What a job becomes around one attempt of one occurrence: may it run, what follows it, and its status after it.

Pure, like plan.py, with no storage and no clock: the executor is the I/O shell that reads the job, asks `may_run`,
runs the action, asks `decide` what follows, and writes `after_attempt` under the job's ETag.

`decide` is the only place that answers "the attempt succeeded or failed: now what?". It returns an
`AttemptOutcome` (its `kind` a named `Outcome`); the executor turns that into writes (a follow-up message, counters,
the job's final state). Table-driven tests (tests/jobstate/test_decide.py) pin every row without storage.

Rules (docs/decisions.md):
- a failed action is retried while its retry policy has retries left; when they run out, the main action's error
  action (if any) runs next, itself under its own policy (by default not retried);
- a scheduled occurrence runs only while its job is Enabled; run-now also while Disabled; a retry or an
  error action finishes an occurrence that already started, so it runs whatever state a later occurrence
  left the job in (a final state included), never cut short;
- every attempt counts as an execution (executionCount), a failed one as a failure (failureCount), an
  occurrence whose main action failed for good as a fault (faultedCount, once per occurrence: it faults once,
  when its main action's retries run out);
- a job whose last scheduled occurrence ends becomes Completed, or Faulted when that occurrence's main
  action failed for good;
- an attempt is counted once: the job remembers its latest RECENT_CLAIMS attempts, and one it lists is done.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum

from ..model import JobHistoryActionName, JobState
from ..records import JobRecord
from ..retry import EffectiveRetry
from .plan import FINAL_STATES, SETTABLE_STATES
from .series import keep_series, series_of

# How many recent attempts a job remembers as done (see JobRecord.recent_claims).
RECENT_CLAIMS = 32


class Outcome(str, Enum):
    """What follows an attempt, as a named value (its `.value` is what telemetry and logs show)."""

    SUCCEEDED = "succeeded"  # the main action succeeded: the occurrence is done
    RETRY = "retry"  # failed, with retries left: the same action runs again after `delay`
    ERROR_ACTION = "error_action"  # the main action failed for good: the error action runs next
    FAULTED = "faulted"  # the main action failed for good, no error action: the occurrence is done, faulted
    ERROR_ACTION_DONE = "error_action_done"  # the error action ended (succeeded or out of retries)

    @property
    def follows(self) -> bool:
        """Another attempt of this occurrence follows (a retry or the error action)."""
        return self in (Outcome.RETRY, Outcome.ERROR_ACTION)

    @property
    def ends_occurrence(self) -> bool:
        return not self.follows


@dataclass(frozen=True)
class AttemptOutcome:
    kind: Outcome
    delay: timedelta = timedelta(0)  # before the follow-up (a retry's interval; none before an error action)
    # The occurrence faults with this attempt: faultedCount counts occurrences, once each.
    faults_occurrence: bool = False
    # When this attempt ends the job's last occurrence, the job becomes Faulted (else Completed).
    faults_job: bool = False


def decide(
    *, succeeded: bool, is_error_action: bool, attempt: int, retry: EffectiveRetry, has_error_action: bool
) -> AttemptOutcome:
    """What follows attempt number `attempt` (0-based) of an action under its effective retry policy."""
    if not succeeded and attempt < retry.retries:
        return AttemptOutcome(Outcome.RETRY, delay=retry.delay(attempt))
    if is_error_action:
        # The main action failed for good before the error action ran: the occurrence faulted already.
        return AttemptOutcome(Outcome.ERROR_ACTION_DONE, faults_job=True)
    if succeeded:
        return AttemptOutcome(Outcome.SUCCEEDED)
    if has_error_action:
        return AttemptOutcome(Outcome.ERROR_ACTION, faults_occurrence=True, faults_job=True)
    return AttemptOutcome(Outcome.FAULTED, faults_occurrence=True, faults_job=True)


@dataclass(frozen=True)
class Attempt:
    """One attempt as the job sees it: which occurrence, how, and what came of it."""

    claim_id: str  # the attempt's (OccurrenceMessage.attempt_id): the same for each poll of its work
    occurrence: datetime
    scheduled: bool  # an occurrence of the job's schedule (not run-now)
    action: JobHistoryActionName = JobHistoryActionName.MAIN_ACTION
    retry: int = 0  # 0 for the action's first attempt
    # A replay of a dead-lettered occurrence (its `scheduled` is False): like a run-now, and, like a retry, it
    # finishes an occurrence that already ran, so a final state does not stop it.
    replay: bool = False


def may_run(job: JobRecord, attempt: Attempt) -> bool:
    """The job's state lets this attempt run now (its collection's state is the executor's to check)."""
    allowed = SETTABLE_STATES if not attempt.scheduled else frozenset({JobState.ENABLED})
    if attempt.retry > 0 or attempt.action == JobHistoryActionName.ERROR_ACTION or attempt.replay:
        allowed |= FINAL_STATES
    return job.state in allowed


def is_done(job: JobRecord, claim_id: str) -> bool:
    """The attempt was recorded already (its first runner finished it, maybe without saying so)."""
    return claim_id in job.recent_claims


def after_attempt(
    job: JobRecord, attempt: Attempt, outcome: AttemptOutcome, started: datetime, succeeded: bool
) -> JobRecord | None:
    """The job's status after the attempt; None when it was counted already (a write whose answer was lost)."""
    if is_done(job, attempt.claim_id):
        return None
    state = job.state
    last = job.next_execution_time is None and series_of(job).following(attempt.occurrence) is None
    if outcome.kind.ends_occurrence and attempt.scheduled and state == JobState.ENABLED and last:
        state = JobState.FAULTED if outcome.faults_job else JobState.COMPLETED
    return keep_series(
        job,
        replace(
            job,
            state=state,
            execution_count=job.execution_count + 1,
            failure_count=job.failure_count + (0 if succeeded else 1),
            faulted_count=job.faulted_count + (1 if outcome.faults_occurrence else 0),
            last_execution_time=started,
            recent_claims=(*job.recent_claims, attempt.claim_id)[-RECENT_CLAIMS:],
            # What an expectation of success counts from (shared/expectations.py): the main action's last success.
            last_success_time=started
            if succeeded and attempt.action == JobHistoryActionName.MAIN_ACTION
            else job.last_success_time,
        ),
    )
