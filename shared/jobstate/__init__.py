"""The job state machine: every rule that decides what a job record becomes, as pure functions.

Below the lifecycle, the dispatcher and the executor (which are its I/O shells: each reads a record, calls
one of these inside its one read-modify-write, and writes the new record back). Nothing here touches
storage, a clock or a queue; records are frozen, and every transition returns a new one.

- series.py: `JobSeries`, a job's occurrences (first, following, latest missed, repeat count), built once
  per record (`series_of`), with its exceptions (exceptions.py: skip, move, add) laid over them.
- plan.py: written (created, rewritten, state changed: `written`, `resolve_state`, `planned`, `moved`) and dispatched
  (`dispatch_step`, `advanced`; `recorded_by`: an advance that waits for the recorder's write); missed_note.py: the
  2016-03-01 note of a catch-up (`postponed_note`, `missed_count`).
- pause.py: a job's pause (due at its `until`, resumed there under the missed-run policy) and a collection's.
- ledger.py: the ledger entries of occurrences that did not run, and why (`let_go`, `not_run`, `superseded`,
  `while_disabled`).
- preview.py: the next occurrences as the dispatcher will fire them, with notes (`upcoming`).
- forecast.py: how many occurrences fire in each minute of the next hours, per destination, and the seconds over
  a destination's rate limit (`forecast`).
- missed.py: the missed-run policy (Skip, Latest, All) of a dispatch that finds the job behind (`catch_up`).
- late.py: the same policy for an occurrence queued before an outage that reaches the executor missed
  (`let_go_late` -> `LetGo`, and `completed` when it was its series' last).
- attempt.py: may this attempt run (`may_run`), what follows it (`decide` -> `AttemptOutcome`), and the job after
  it (`after_attempt`).
- explain.py: what happened or will happen to one instant of a job, and by which rule (`explain` ->
  `Explanation`), in explain_words.py's words.
- view.py: the status the API shows (`status`) and when a finished job expires (`expired`).
- spread.py: the fixed offset of a job's occurrences inside its spreadWindow (`spread_offset`, `offset_of`).
- auto_spread.py: a collection's autoSpread: the occurrences of a crowded second placed later, within the
  tolerance (`planned` -> `SpreadPlan`; `place`, which the forecast uses too).
- overlap.py: what an occurrence does while an earlier one of its job runs (`on_occurrence` -> `Turn`, and the
  job's marker: `begun`, `ended`, `extended`).
- pacing.py: a target host's rate limit as slots (`pace`, `rule_for`) and on the wire (`send_at`).
- concurrency.py: a collection's maxConcurrentExecutions as leased slots and a line in due order (`acquire`,
  `released`, `renewed`).

Table tests of the whole lifecycle without storage: tests/jobstate/.
"""

from .attempt import RECENT_CLAIMS, Attempt, AttemptOutcome, Outcome, after_attempt, decide, is_done, may_run
from .concurrency import Acquired, GateState, SlotRequest, acquire, released, renewed, worth_asking
from .explain import Explanation, Verdict, explain
from .late import LetGo, completed, let_go_late
from .ledger import let_go, let_go_queued, not_run, resumed, skipped_by_overlap, superseded, waiting, while_disabled
from .missed import MISSED_AFTER, CatchUp, catch_up
from .missed_note import missed_count, postponed_note
from .overlap import (
    Begun,
    Ended,
    Turn,
    begun,
    ended,
    extended,
    marker_until,
    on_occurrence,
    settled,
)
from .pacing import Paced, pace, pacer_key, rule_for, send_at, target_host, window_of
from .plan import (
    CATCH_UP_SPACING,
    COLLECTION_CASCADE,
    FINAL_STATES,
    DispatchStep,
    StateRefused,
    advanced,
    awaits_its_write,
    dispatch_step,
    has_advanced,
    moved,
    new_generation,
    planned,
    recorded_by,
    resolve_state,
    still_due,
    written,
)
from .preview import Note, Upcoming, upcoming
from .series import JobSeries, engine_recurrence, series_of, start_of
from .spread import fire_instant, offset_of, spread_offset
from .view import FINISHED_JOB_AGE, expired, status

__all__ = [
    "Explanation",
    "Verdict",
    "explain",
    "Acquired",
    "Begun",
    "Ended",
    "GateState",
    "Paced",
    "SlotRequest",
    "Turn",
    "acquire",
    "begun",
    "ended",
    "extended",
    "fire_instant",
    "marker_until",
    "offset_of",
    "on_occurrence",
    "pace",
    "pacer_key",
    "released",
    "renewed",
    "worth_asking",
    "rule_for",
    "send_at",
    "settled",
    "target_host",
    "window_of",
    "skipped_by_overlap",
    "spread_offset",
    "waiting",
    "CATCH_UP_SPACING",
    "CatchUp",
    "Note",
    "Upcoming",
    "catch_up",
    "upcoming",
    "let_go",
    "awaits_its_write",
    "let_go_late",
    "let_go_queued",
    "LetGo",
    "completed",
    "not_run",
    "resumed",
    "superseded",
    "while_disabled",
    "COLLECTION_CASCADE",
    "FINAL_STATES",
    "FINISHED_JOB_AGE",
    "MISSED_AFTER",
    "RECENT_CLAIMS",
    "Attempt",
    "AttemptOutcome",
    "DispatchStep",
    "JobSeries",
    "Outcome",
    "StateRefused",
    "advanced",
    "after_attempt",
    "decide",
    "dispatch_step",
    "engine_recurrence",
    "expired",
    "has_advanced",
    "is_done",
    "may_run",
    "missed_count",
    "moved",
    "new_generation",
    "planned",
    "postponed_note",
    "recorded_by",
    "resolve_state",
    "series_of",
    "start_of",
    "status",
    "still_due",
    "written",
]
