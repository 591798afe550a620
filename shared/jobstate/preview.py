"""Preview: the next occurrences of a job as the engine will fire them, with notes. Pure.

What it answers is what the dispatcher does (plan.py `dispatch_step`), so that the preview of a job equals what
is fired for it (tests/jobstate/test_preview.py checks it over random jobs and a simulated month):
- a job that is not Enabled fires nothing (a note says why);
- an occurrence already queued and not yet due comes first;
- a job found behind its schedule (the dispatcher was held back) fires what its missed-run policy runs, when
  the policy says (notes `MissedRunPolicy`), then its occurrences on time;
- an occurrence late by less than MISSED_AFTER (not missed) fires at once, as the next tick queues it;
- then each following occurrence of its series, from `start` on when that is later.
A job with a spreadWindow fires each occurrence at its offset after the nominal time (spread.py): `fires` is that
instant, and lateness is measured from it, as the dispatcher does (the series seen shifted by the offset).
Notes of an occurrence: `DstGap` (a wall time the schedule names was skipped by a spring-forward change: it
runs at the first instant after it), `DstFold` and `DstFoldSecond` (its wall time repeats: this run is at its
first, or its second, instance, as the DST policy says), `DstSkipped` (the first occurrence after a change at which
the policy Skip dropped a wall time),
`EndByCount`, `EndByEndTime`, `OneShot` (the last occurrence), `MissedRunPolicy`, `Moved` and `Extra` (an
exception put it there), `Paused` (held by the job's pause: its resume runs it, under the missed-run policy).
Notes of the job: `Job<state>` (nothing fires), `MissedRunPolicy`, `NoOccurrence` (its series has ended),
`Paused` (until when, the note, and what its resume does), `Excepted` (an occurrence within the answer's span an
exception skips), and
`EndOfCalendar`: an endless series stops at the calendar's last second, 9999-12-31T23:59:59Z (instants are
computed in years 1 to 9999), so the answer ends with the last occurrence before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from ..model import FoldPolicy, JobState, LedgerReason, MissedRunType, format_utc
from ..records import JobRecord
from .missed import is_missed
from .pause import is_resume
from .plan import dispatch_step
from .series import series_of
from .spread import CALENDAR_END, fires_at, offset_of


@dataclass(frozen=True)
class Note:
    code: str
    message: str


@dataclass(frozen=True)
class Upcoming:
    occurrence: datetime  # the nominal occurrence
    fires: datetime  # when it fires: its spread offset after `occurrence`, or later for a late or missed one
    notes: tuple[Note, ...] = ()


END_OF_CALENDAR = Note(
    "EndOfCalendar",
    f"The series has no occurrence after {format_utc(CALENDAR_END)}, the end of the calendar instants are "
    "computed in: the occurrences stop there.",
)

_ENDS = {
    "count": Note("EndByCount", "The last occurrence: the recurrence's count is reached."),
    "endTime": Note("EndByEndTime", "The last occurrence before the recurrence's endTime."),
    "once": Note("OneShot", "The job's only occurrence."),
}


def _notes(job: JobRecord, occurrence: datetime) -> tuple[Note, ...]:
    series = series_of(job)
    notes: list[Note] = []
    shift = series.dst_shift(occurrence)
    recurrence = job.properties.recurrence
    zone = recurrence.time_zone if recurrence else None
    policy = recurrence.dst_policy if recurrence is not None else None
    both = policy is not None and policy.fold == FoldPolicy.BOTH
    if shift == "gap":
        notes.append(
            Note(
                "DstGap",
                f"A wall time the schedule names does not exist on this day in {zone} (the "
                "clocks go forward): it runs at the first instant after the change.",
            )
        )
    elif shift == "fold":
        notes.append(
            Note(
                "DstFold",
                f"This wall time occurs twice on this day in {zone} (the clocks go back): "
                + ("it runs at both instances; this is the first." if both else "it runs at the first instance only."),
            )
        )
    elif shift == "fold-second":
        notes.append(
            Note(
                "DstFoldSecond",
                f"This wall time occurs twice on this day in {zone} (the clocks go back): "
                + ("it runs at both instances; this is the second." if both else "it runs at the second instance."),
            )
        )
    if zone and series.recurring and not series.is_added(occurrence):
        before = series.previous(occurrence) or occurrence - timedelta(days=2)
        for change in series.engine.dst_skipped(before, occurrence):
            notes.append(
                Note(
                    "DstSkipped",
                    f"A wall time the schedule names did not exist at the change of {format_utc(change)} in {zone} "
                    "(the clocks went forward): under the DST policy Skip it did not run.",
                )
            )
    named = series.excepted(occurrence)
    if named is not None:
        reason, exception = named
        said = f" ({exception.note})" if exception.note else ""
        if reason == LedgerReason.MOVED:
            notes.append(Note("Moved", f"Moved here from {format_utc(exception.occurrence)} by an exception{said}."))
        elif reason == LedgerReason.EXTRA:
            notes.append(Note("Extra", f"An extra run, added by an exception{said}."))
    end = series.ends_with(occurrence)
    if end is not None:
        notes.append(_ENDS[end])
    return tuple(notes)


def _excepted(job: JobRecord, found: list[Upcoming], since: datetime) -> list[Note]:
    """The job's notes on the occurrences its exceptions take out within what the answer spans."""
    if not found:
        return []
    series = series_of(job)
    notes = []
    for instant in series.exceptions.excepted_between(since - timedelta(seconds=1), found[-1].occurrence):
        named = series.excepted(instant)
        if named is None or named[1].move_to is not None:
            continue  # a move shows where it runs instead
        said = f" ({named[1].note})" if named[1].note else ""
        notes.append(Note("Excepted", f"{format_utc(instant)} is skipped by an exception{said}."))
    return notes


def _resumed(
    job: JobRecord, due: datetime, now: datetime, since: datetime
) -> tuple[list[Upcoming], Note, datetime | None]:
    """A paused job (pause.py): what its resume at `due` runs (from `since` on), the job's note on the pause, and
    the occurrence after it."""
    step = dispatch_step(job, due, now)
    pause = job.properties.pause
    assert pause is not None
    said = f": {pause.note}" if pause.note else ""
    caught = step.catch_up
    held = caught.let_go_count + len(caught.runs) if caught is not None else 0
    policy = caught.policy.value if caught is not None else MissedRunType.LATEST.value
    job_note = Note(
        "Paused",
        f"The job is paused until {format_utc(pause.until)}{said}. Then its missed-run policy {policy} decides "
        f"what of the {held} occurrence(s) it held runs.",
    )
    note = Note("Paused", f"Held by the pause; runs at its end, {format_utc(pause.until)}, under the policy {policy}.")
    found = []
    for occurrence in step.queued:
        fires = max(step.due_of(occurrence, now), now)  # a resume the dispatcher finds late fires now
        if fires >= since:
            notes = (note, *_notes(job, occurrence)) if occurrence < pause.until else _notes(job, occurrence)
            found.append(Upcoming(occurrence, fires, notes))
    return found, job_note, step.following


def _queued(job: JobRecord, since: datetime, offset: timedelta) -> list[Upcoming]:
    """The occurrence already queued and not yet due, when it fires from `since` on and has not run."""
    queued = job.dispatched_occurrence
    if queued is None:
        return []
    fires = fires_at(queued, offset)
    pause = job.properties.pause
    if pause is not None and queued < pause.until:  # queued by the pause's resume: it fires at the end (pause.py)
        fires = max(fires, pause.until)
    if fires < since or (job.last_execution_time is not None and job.last_execution_time >= fires):
        return []
    return [Upcoming(queued, fires, _notes(job, queued))]


def _caught_up(
    job: JobRecord, due: datetime, now: datetime, since: datetime
) -> tuple[list[Upcoming], Note, datetime | None]:
    """A job behind its schedule from `due`: what its missed-run policy runs (from `since` on), the job's note on
    it, and the occurrence after the missed ones."""
    step = dispatch_step(job, due, now)
    caught = step.catch_up
    assert caught is not None
    policy = caught.policy.value
    job_note = Note(
        "MissedRunPolicy",
        (
            f"{caught.let_go_count + len(caught.runs)} occurrence(s) from {format_utc(due)} were missed; the "
            f"missed-run policy {policy} runs {len(caught.runs)} of them now."
        ),
    )
    note = Note(
        "MissedRunPolicy",
        f"Missed; runs late under the missed-run policy {policy}."
        if caught.policy != MissedRunType.LATEST
        else "Missed; the latest missed occurrence runs in place of the others (policy Latest).",
    )
    found: list[Upcoming] = []
    for occurrence in step.queued:
        fires = max(step.due_of(occurrence, now), now)  # a missed occurrence fires now, or in turn
        if fires >= since:
            found.append(Upcoming(occurrence, fires, (note, *_notes(job, occurrence))))
    return found, job_note, step.following


def _on_time(
    job: JobRecord, due: datetime | None, now: datetime, since: datetime, room: int
) -> tuple[list[Upcoming], datetime | None]:
    """Up to `room` occurrences of the series from `due` on, and the one after them (None: the series ended)."""
    offset = offset_of(job)
    series = series_of(job)
    found: list[Upcoming] = []
    # Late, not missed: the next tick fires it.
    while due is not None and fires_at(due, offset) < now and len(found) < room:
        if now >= since:
            found.append(Upcoming(due, now, _notes(job, due)))
        due = series.following(due)
    if due is not None and fires_at(due, offset) < since:
        due = series.first_at_or_after(since - offset)
    while due is not None and len(found) < room:
        found.append(Upcoming(due, fires_at(due, offset), _notes(job, due)))
        due = series.following(due)
    return found, due


def _ended(job: JobRecord, found: list[Upcoming]) -> Note | None:
    """The job's note when no occurrence follows what is `found`: where its series stopped."""
    series = series_of(job)
    if series.recurring and not series.engine.is_finite:
        return END_OF_CALENDAR  # an endless series ends only there
    return None if found else Note("NoOccurrence", "No occurrence is left to fire.")


def upcoming(
    job: JobRecord,
    now: datetime,
    count: int,
    start: datetime | None = None,
) -> tuple[list[Upcoming], list[Note]]:
    """The job's next `count` occurrences that fire at or after `start` (default now), and notes on the job."""
    if job.state != JobState.ENABLED:
        return [], [Note(f"Job{job.state.value}", f"The job is {job.state.value}: nothing fires.")]
    since = max(start or now, now)
    offset = offset_of(job)
    found = _queued(job, since, offset)
    job_notes: list[Note] = []
    due = job.next_execution_time
    if due is not None and is_resume(job, due):
        resumed, note, due = _resumed(job, due, now, since)
        found.extend(resumed)
        job_notes.append(note)
    if due is not None and not is_resume(job, due) and is_missed(due, now - offset):  # a resume found late, too
        missed, note, due = _caught_up(job, due, now, since)
        found.extend(missed)
        job_notes.append(note)
    following, due = _on_time(job, due, now, since, count - len(found))
    found.extend(following)
    job_notes.extend(_excepted(job, found[:count], since))
    ended = _ended(job, found) if due is None else None
    if ended is not None:
        job_notes.append(ended)
    return found[:count], job_notes
