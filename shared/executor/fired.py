"""An attempt as the executor hands it on: the `Attempt` a message carries (what jobstate's rules take), and
`Fired`, an attempt whose action ran, as `Attempts.fire` returns it and the recorder (recorder.py) writes it.

Both belong to the attempt (attempts.py makes them); the recorder, which runs after it, only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..jobstate import Attempt, AttemptOutcome, after_attempt
from ..model import JobErrorAction, JobHistoryActionName
from ..occurrence import OccurrenceMessage
from ..records import HistoryRecord, JobRecord
from ..store import Claim


def attempt_of(message: OccurrenceMessage) -> Attempt:
    """The attempt a message carries, as the job state machine sees it: a poll's is the attempt it polls, so the
    attempt is counted once whichever of its polls finds the work's end."""
    return Attempt(
        message.attempt_id, message.occurrence, message.scheduled, message.action, message.attempt, message.replay > 0
    )


def action_of(job: JobRecord, message: OccurrenceMessage) -> JobErrorAction | None:
    """The action the attempt runs: its job's action, or that action's error action (None: the job has none)."""
    main = job.properties.action
    if main is not None and message.action == JobHistoryActionName.ERROR_ACTION:
        return main.error_action
    return main


@dataclass(frozen=True)
class Fired:
    """An attempt whose action ran: what is left to record."""

    message: OccurrenceMessage
    job: JobRecord
    claim: Claim
    history: HistoryRecord
    follow_up: OccurrenceMessage | None
    outcome: AttemptOutcome
    succeeded: bool

    def apply(self, record: JobRecord) -> JobRecord | None:
        """The job after this attempt (None: already counted); applied under the job's ETag, maybe again."""
        return after_attempt(record, attempt_of(self.message), self.outcome, self.history.start_time, self.succeeded)
