"""The words of explain.py: the phrases its one-sentence messages are made of. Pure.

Each phrase is lower case and ends without a period; explain.py joins them into one sentence and capitalises it.
A ledger entry's own message (jobstate/ledger.py: "Not run: ...", "Missed while ...") is reused where it carries
specifics the explanation cannot know (the occurrence that ran in its place, the one that still ran).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ..model import JobState, LedgerReason, OccurrenceException, WaitCause, format_utc
from ..occurrence import Trigger
from ..records import LedgerEntry

WAITS_FOR = {
    WaitCause.PREVIOUS: "the previous occurrence to end (overlapPolicy BufferOne)",
    WaitCause.CONCURRENCY: "a slot of maxConcurrentExecutions",
    WaitCause.RATE_LIMIT: "its turn under the target host's requestsPerSecond",
    WaitCause.DESTINATION: "its destination to take requests again (it pushed back, or its circuit is open)",
}
# What keeps a job from running anything, by the rule's name (explain.py `reason`).
IS = {
    LedgerReason.JOB_DISABLED.value: "the job is Disabled",
    LedgerReason.COLLECTION_DISABLED.value: "its job collection is Disabled",
    LedgerReason.COLLECTION_SUSPENDED.value: "its job collection is Suspended",
    f"Job{JobState.COMPLETED.value}": "the job is Completed",
    f"Job{JobState.FAULTED.value}": "the job is Faulted",
}
# Said of an occurrence that did not run when its ledger entry has no message of its own.
_NOT_RUN = {
    LedgerReason.SKIPPED_BY_POLICY: "missed, and the missed-run policy let it go",
    LedgerReason.POSTPONED: "missed; the Latest missed-run policy ran the latest missed occurrence in its place",
    LedgerReason.JOB_DISABLED: "the job was Disabled",
    LedgerReason.COLLECTION_DISABLED: "its job collection was Disabled",
    LedgerReason.COLLECTION_SUSPENDED: "its job collection was Suspended",
    LedgerReason.QUOTA: "its job collection's plan did not allow it",
    LedgerReason.JOB_CHANGED: "the job was changed after it was queued, and the new definition does not run it",
    LedgerReason.SKIPPED_BY_OVERLAP: "the previous occurrence still ran (overlapPolicy)",
    LedgerReason.EXCEPTED: "skipped by an exception of the job",
    LedgerReason.MOVED: "moved by an exception of the job",
    LedgerReason.PAUSED: "the job was paused",
}
_MANUAL = {Trigger.RUN_NOW.value: "run-now", Trigger.BACKFILL.value: "backfill"}


def t(instant: datetime) -> str:
    return format_utc(instant)


def span(value: timedelta) -> str:
    """A duration for a person: "12 s", "3 min 20 s", "2 h 5 min", "1 d 2 h" (whole seconds, two units at most)."""
    seconds = int(value.total_seconds())
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, seconds = divmod(rest, 60)
    shown = [f"{n} {unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "min"), (seconds, "s")) if n]
    return " ".join(shown[:2]) or "0 s"


def attempts(count: int) -> str:
    return f"after {count} attempt{'s' if count != 1 else ''}"


def not_run(kind: str, entry: LedgerEntry) -> str:
    """A Skipped or Postponed entry (`kind` "skipped" or "postponed") in the ledger's own words where it has them:
    "Not run: the job was Disabled." reads "skipped: the job was Disabled"."""
    detail = entry.message.strip().removeprefix("Not run:").strip().rstrip(".")
    if not detail:
        detail = _NOT_RUN.get(entry.reason, "not run") if entry.reason is not None else "not run"
    detail = detail[:1].lower() + detail[1:]
    if detail.startswith(f"{kind} "):  # "skipped by an exception ...", not "skipped: skipped by ..."
        return detail
    return f"{kind}: {detail}"


def taken_out(exception: OccurrenceException) -> str:
    """An exception that takes the instant out: a Skip, or the source of a Move."""
    note = f" ({exception.note})" if exception.note else ""
    if exception.move_to is not None:
        return f"moved to {t(exception.move_to)} by an exception of the job{note}"
    return f"skipped by an exception of the job{note}"


def put_in(reason: str, exception: OccurrenceException | None) -> str:
    """What an exception that put the instant in says of it ("" for an occurrence of the recurrence)."""
    if exception is None or reason not in (LedgerReason.EXTRA.value, LedgerReason.MOVED.value):
        return ""
    note = f", {exception.note}" if exception.note else ""
    if reason == LedgerReason.MOVED.value:
        return f" (moved here from {t(exception.occurrence)} by an exception{note})"
    return f" (an extra run, added by an exception{note})"


def manual_runs(entries: tuple[LedgerEntry, ...]) -> str:
    """Run-now and backfill entries at the instant: named, never taken for the scheduled occurrence."""
    if not entries:
        return ""
    runs = ", ".join(f"{_MANUAL.get(e.trigger, e.trigger)} {e.status.value}" for e in entries)
    return f"; also run by hand at this instant, as occurrences of their own: {runs}"


def sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."
