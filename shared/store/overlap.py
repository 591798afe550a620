"""A job's overlap marker (jobstate/overlap.py: which of its occurrences run and which one waits) as the job row's
`Overlap` property: one compact JSON text, absent when nothing runs or waits (a few hundred bytes otherwise).
Encoding and decoding only: the marker is read and written with its job (`JobStore.get`, `replace`, under the
job's ETag), and what it becomes is jobstate's `begun`, `ended` and `extended`, composed with that read and write
by the executor (executor/overlap_marker.py).

Why on the job's row and not a row of its own: the executor reads the job before every attempt anyway and the
recorder writes it after every attempt (its counters, under its ETag, in transactions of up to 100 jobs of a
collection), so checking the marker costs nothing, and the release at an occurrence's end rides on the write
that ends it (`jobstate.ended` applied in the same change). Only the start of an occurrence of a job whose
policy is not Allow (or of one a Skip or BufferOne override queued) costs one more write of the job
(`overlap_marker.begin`); the other occurrences of Allow jobs (the default) keep no marker and pay nothing. A
row of its own would cost a read per attempt and a write per end for every job.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..model import OverlapPolicy, format_utc, to_utc
from ..records import NO_OVERLAP, OccurrenceRef, OverlapMarker, RunningOccurrence, WaitingOccurrence


def encode(marker: OverlapMarker) -> str | None:
    """The `Overlap` property of a job row; None when the marker is empty."""
    if not marker:
        return None
    data: dict[str, Any] = {
        "r": [[*_ref(r.ref), format_utc(r.since), format_utc(r.until)] for r in marker.running],
    }
    if marker.waiting is not None:
        waiting = marker.waiting
        data["w"] = [*_ref(waiting.ref), format_utc(waiting.since), format_utc(waiting.until)]
    return json.dumps(data, separators=(",", ":"))


def decode(text: Any) -> OverlapMarker:
    """The marker a job row holds (an empty one for none; an unreadable one is dropped: it only lapses early)."""
    if not isinstance(text, str) or not text:
        return NO_OVERLAP
    try:
        data = json.loads(text)
        running = tuple(RunningOccurrence(_unref(r[:5]), _at(r[5]), _at(r[6])) for r in data.get("r", []))
        w = data.get("w")
        waiting = WaitingOccurrence(_unref(w[:5]), _at(w[5]), _at(w[6])) if w else None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return NO_OVERLAP
    return OverlapMarker(running, waiting)


def _ref(ref: OccurrenceRef) -> list[Any]:
    override = ref.overlap.value if ref.overlap is not None else None
    return [ref.execution_id, format_utc(ref.occurrence), ref.trigger, ref.generation, override]


def _unref(items: list[Any]) -> OccurrenceRef:
    execution_id, occurrence, trigger, generation, overlap = items
    return OccurrenceRef(
        str(execution_id), _at(occurrence), str(trigger), int(generation), OverlapPolicy(overlap) if overlap else None
    )


def _at(text: Any) -> datetime:
    return to_utc(datetime.fromisoformat(str(text)))
