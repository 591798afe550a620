"""Properties only the newer api-version knows (issue 39): control over single occurrences, a pause that ends by
itself, and the DST policy of a wall-clock recurrence. Each is a row of `EXTENSIONS` (versions.py), so 2016-03-01
neither shows nor loses them (an official client's read-modify-write keeps them).

Rules (docs/decisions.md, "Occurrence control"):
- job `exceptions`: at most MAX_EXCEPTIONS (200), each about one instant. `Skip` an occurrence of the series;
  `Move` one to `moveTo` (it runs there, once, instead); `Add` an extra run at `occurrence`. The recurrence is
  untouched; an exception whose every instant lies more than EXCEPTION_KEPT_FOR past is pruned by the next write
  (lifecycle/occurrence_rules.py); the semantic checks (an occurrence of the series, no two about one instant)
  need the series and live there too;
- job `pause`: `{until, note}`: no occurrence due before `until` runs (each is named in the ledger, reason
  Paused, with the note); at `until` the job resumes by itself and its missed-run policy decides what of the
  paused occurrences runs, as after an outage (jobstate/pause.py); a pause whose `until` has passed is inert;
- recurrence `dstPolicy` (with a `timeZone` only): `gap` `Shift` (the default: a wall time a spring-forward change
  skips runs at the first instant after it) or `Skip` (it does not run); `fold` `First` (the default: a repeated
  wall time runs at its first instance), `Last` (its second) or `Both`;
- recurrence `cron`: five cron fields (or a macro such as `@daily`) on the wall clock of `timeZone` (UTC without),
  instead of `frequency`, `interval` and `schedule` (model/recurrence.py refuses the mix).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import Field, model_validator

from .base import CaseInsensitiveEnum, WireModel
from .instants import UtcDateTime

MAX_EXCEPTIONS = 200  # the job's 16,000-byte size counts them too: about 200 skips fit beside an action
MAX_NOTE = 500
# An exception this long past every instant it names is pruned by the next write of its job (it can no longer
# change what runs, and the ledger already names what it did).
EXCEPTION_KEPT_FOR = timedelta(days=1)

Note = Annotated[str, Field(max_length=MAX_NOTE)]


class ExceptionType(CaseInsensitiveEnum):
    SKIP = "Skip"
    MOVE = "Move"
    ADD = "Add"


class OccurrenceException(WireModel):
    type: ExceptionType = Field(description="Skip or Move an occurrence of the series, or Add an extra run.")
    occurrence: UtcDateTime = Field(
        description="Skip and Move: the occurrence of the series (as preview lists it); Add: the extra run's instant."
    )
    move_to: UtcDateTime | None = Field(
        default=None, alias="moveTo", description="Move only: where the occurrence runs instead."
    )
    note: Note | None = Field(default=None, description="Shown in preview and in the ledger.")

    @model_validator(mode="after")
    def _move_only(self) -> OccurrenceException:
        if (self.type == ExceptionType.MOVE) != (self.move_to is not None):
            raise ValueError("moveTo belongs to an exception of type Move, and a Move needs it.")
        return self


class JobPause(WireModel):
    until: UtcDateTime = Field(description="The job resumes by itself at this instant.")
    note: Note | None = Field(default=None, description="Why: shown on the job and on every occurrence it skipped.")


class GapPolicy(CaseInsensitiveEnum):
    SHIFT = "Shift"
    SKIP = "Skip"


class FoldPolicy(CaseInsensitiveEnum):
    FIRST = "First"
    LAST = "Last"
    BOTH = "Both"


class DstShift(CaseInsensitiveEnum):
    """How a DST change placed an occurrence that ran (a ledger entry's `dstShift`; preview notes DstGap, DstFold,
    DstFoldSecond): at the first instant after a gap, or at the first or second instance of a repeated wall time."""

    GAP = "Gap"
    FOLD = "Fold"
    FOLD_SECOND = "FoldSecond"


class DstPolicy(WireModel):
    gap: GapPolicy | None = Field(
        default=None,
        description="A wall time a spring-forward change skips: Shift (the default) runs it at the first instant "
        "after the change, Skip does not run it.",
    )
    fold: FoldPolicy | None = Field(
        default=None,
        description="A wall time a fall-back change repeats: First (the default), Last or Both instances run.",
    )
