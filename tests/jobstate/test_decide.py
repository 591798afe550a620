"""What follows an attempt, row by row: `decide` is pure, so these need no storage, no clock, no queue."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.jobstate import AttemptOutcome, Outcome, decide
from shared.retry import MAIN_ACTION_DEFAULT, NO_RETRY, EffectiveRetry

THREE_FIXED = EffectiveRetry(3, timedelta(seconds=20))
EXPONENTIAL = EffectiveRetry(5, timedelta(seconds=10), exponential=True, max_interval=timedelta(seconds=60))
S = timedelta(seconds=1)

# succeeded, error action?, attempt, retry policy, has an error action -> kind, delay, faults occurrence, faults job
ROWS = [
    # the main action
    (True, False, 0, THREE_FIXED, False, Outcome.SUCCEEDED, 0 * S, False, False),
    (True, False, 2, THREE_FIXED, True, Outcome.SUCCEEDED, 0 * S, False, False),
    (False, False, 0, THREE_FIXED, False, Outcome.RETRY, 20 * S, False, False),
    (False, False, 2, THREE_FIXED, True, Outcome.RETRY, 20 * S, False, False),
    (False, False, 3, THREE_FIXED, False, Outcome.FAULTED, 0 * S, True, True),
    (False, False, 3, THREE_FIXED, True, Outcome.ERROR_ACTION, 0 * S, True, True),
    (False, False, 0, NO_RETRY, False, Outcome.FAULTED, 0 * S, True, True),
    (False, False, 0, NO_RETRY, True, Outcome.ERROR_ACTION, 0 * S, True, True),
    (False, False, 0, MAIN_ACTION_DEFAULT, False, Outcome.RETRY, 30 * S, False, False),
    (False, False, 4, MAIN_ACTION_DEFAULT, False, Outcome.FAULTED, 0 * S, True, True),
    # exponential: doubling per retry, capped
    (False, False, 0, EXPONENTIAL, False, Outcome.RETRY, 10 * S, False, False),
    (False, False, 2, EXPONENTIAL, False, Outcome.RETRY, 40 * S, False, False),
    (False, False, 3, EXPONENTIAL, False, Outcome.RETRY, 60 * S, False, False),
    # the error action: it never faults the occurrence again (the main action did), but ends a job Faulted
    (True, True, 0, NO_RETRY, True, Outcome.ERROR_ACTION_DONE, 0 * S, False, True),
    (False, True, 0, NO_RETRY, True, Outcome.ERROR_ACTION_DONE, 0 * S, False, True),
    (False, True, 0, THREE_FIXED, True, Outcome.RETRY, 20 * S, False, False),
    (False, True, 3, THREE_FIXED, True, Outcome.ERROR_ACTION_DONE, 0 * S, False, True),
    (True, True, 1, THREE_FIXED, True, Outcome.ERROR_ACTION_DONE, 0 * S, False, True),
]


@pytest.mark.parametrize(
    (
        "succeeded",
        "is_error_action",
        "attempt",
        "retry",
        "has_error_action",
        "kind",
        "delay",
        "faults_occurrence",
        "faults_job",
    ),
    ROWS,
)
def test_what_follows_an_attempt(
    succeeded: bool,
    is_error_action: bool,
    attempt: int,
    retry: EffectiveRetry,
    has_error_action: bool,
    kind: Outcome,
    delay: timedelta,
    faults_occurrence: bool,
    faults_job: bool,
) -> None:
    outcome = decide(
        succeeded=succeeded,
        is_error_action=is_error_action,
        attempt=attempt,
        retry=retry,
        has_error_action=has_error_action,
    )
    assert outcome == AttemptOutcome(kind, delay, faults_occurrence, faults_job)


def test_only_a_retry_or_the_error_action_leaves_the_occurrence_open() -> None:
    assert {kind for kind in Outcome if kind.follows} == {Outcome.RETRY, Outcome.ERROR_ACTION}
    assert all(kind.ends_occurrence != kind.follows for kind in Outcome)
