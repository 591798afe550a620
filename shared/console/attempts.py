"""Every attempt of an occurrence under it: the rule the CLI (`jobs history`, `jobs ledger`) and the console's job
page share to put the attempts (the newer api-version's GET .../attempts: one entry per attempt, each retry, the
error action) under the occurrences of its ledger (one entry per occurrence).

An attempt names its occurrence as the occurrence's ledger entry does: `executionTag` (every attempt's row holds
it), `occurrenceTime` and `trigger` (rows written since they are kept). It goes under the listed occurrence so
named, exactly, however occurrences overlapped and whatever their retry policy was. An entry naming none (2016-03-01
history's) is placed, under an occurrence none of whose attempts named it, by the executor's arithmetic read back
from the times both lists show (shared/console/attempt_times.py).
The attempts of an occurrence not listed are a group of their own (`occurrence` None), unless the occurrences
are a filtered selection (`unplaced=False`) or theirs is older than the oldest listed (as its `occurrenceTime`,
else the attempt's due, says: another page's). A Postponed note is left out (its occurrences have entries).

`group(occurrences, attempts, action)` takes the two lists' entries (wire documents, any order) and the job's
`properties.action`, and answers the groups newest first as indexes into the two lists, each group's attempts
in the order they ran. `answer(body)` is the console's endpoint (shared/console/pages.py): `{"occurrences":
[...], "attempts": [...], "action"?: {...}}` answers `{"value": [{"occurrence": i | null, "attempts": [j, ...]}]}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .attempt_times import Placer
from .history_entries import EARLIEST, ERROR, MAIN, SAME, count, properties, time

MAX_ENTRIES = 1000  # of each list: a job keeps at most 1,000 of each (shared/retention.py)


@dataclass
class Group:
    occurrence: int | None
    attempts: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"occurrence": self.occurrence, "attempts": self.attempts}


def _is_attempt(p: dict[str, Any]) -> bool:
    """Not a note (a Postponed entry of 2016-03-01 history)."""
    return str(p.get("actionName", "")).lower() in (MAIN, ERROR) and str(p.get("status", "")).lower() != "postponed"


Identity = tuple[str, ...]


def _due(p: dict[str, Any]) -> datetime:
    """When an attempt was due; one that does not say is kept (as due now)."""
    return time(p.get("expectedExecutionTime")) or datetime.max.replace(tzinfo=UTC)


def _names(p: dict[str, Any]) -> list[Identity]:
    """What names an entry's occurrence: its execution tag, then its instant and trigger."""
    found: list[Identity] = []
    if isinstance(p.get("executionTag"), str) and p["executionTag"]:
        found.append(("tag", p["executionTag"]))
    at = time(p.get("occurrenceTime"))
    if at is not None and isinstance(p.get("trigger"), str) and p["trigger"]:
        found.append(("at", at.isoformat(), p["trigger"].lower()))
    return found


def _ran(attempts: list[Any], indexes: list[int]) -> list[int]:
    """The attempts of one occurrence in the order they ran: the main action's, then the error action's."""

    def order(i: int) -> tuple[int, int, datetime]:
        p = properties(attempts[i])
        kind = 1 if str(p.get("actionName", "")).lower() == ERROR else 0
        return kind, count(p.get("retryCount")), time(p.get("startTime")) or EARLIEST

    return sorted(indexes, key=order)


def _newest(entry: Any, key: str) -> datetime:
    return time(properties(entry).get(key)) or EARLIEST


def _listed(occurrences: list[Any]) -> dict[Identity, int]:
    """Each name of a listed occurrence, and which one it names (the first listed, should two share one)."""
    listed: dict[Identity, int] = {}
    for index, entry in enumerate(occurrences):
        for identity in _names(properties(entry)):
            listed.setdefault(identity, index)
    return listed


@dataclass
class _ByName:
    """The attempts (notes left out) by what names their occurrence."""

    named: dict[int, list[int]] = field(default_factory=dict)  # under the listed occurrence they name
    elsewhere: dict[Identity, list[int]] = field(default_factory=dict)  # naming an occurrence not listed
    by_time: list[int] = field(default_factory=list)  # naming none: placed by their times


def _by_name(attempts: list[Any], listed: dict[Identity, int], floor: datetime, unplaced: bool) -> _ByName:
    """The attempts by their names; those of an occurrence not listed only with `unplaced`, and not when older
    than `floor` (another page's)."""
    found = _ByName()
    for index, entry in enumerate(attempts):
        p = properties(entry)
        if not _is_attempt(p):
            continue  # a note, not an attempt
        names = _names(p)
        if not names:
            found.by_time.append(index)
        elif names[0] in listed:  # its tag when it has one: a tag that differs is another occurrence
            found.named.setdefault(listed[names[0]], []).append(index)
        elif unplaced and (time(p.get("occurrenceTime")) or _due(p)) >= floor:
            found.elsewhere.setdefault(names[0], []).append(index)
    return found


def _when(g: Group, occurrences: list[Any], attempts: list[Any]) -> datetime:
    """Where a group goes among the others: its occurrence's instant, else its first attempt's."""
    if g.occurrence is not None:
        return _newest(occurrences[g.occurrence], "occurrenceTime")
    first = properties(attempts[g.attempts[0]])
    return time(first.get("occurrenceTime")) or time(first.get("startTime")) or EARLIEST


def group(occurrences: list[Any], attempts: list[Any], action: Any = None, unplaced: bool = True) -> list[Group]:
    """The occurrences, newest first, each with its attempts in order; with `unplaced`, the attempts of an
    occurrence not listed are a group of their own among them (except those of an occurrence older than the
    oldest listed: another page's)."""
    order = sorted(range(len(occurrences)), key=lambda i: _newest(occurrences[i], "occurrenceTime"), reverse=True)
    oldest = _newest(occurrences[order[-1]], "occurrenceTime") if order else EARLIEST
    # What counts as this page's: not older than the oldest listed, by storage's rounding (no page: all of it).
    floor = max(oldest, EARLIEST + SAME) - SAME
    by_name = _by_name(attempts, _listed(occurrences), floor, unplaced)
    placer = Placer(attempts, action if isinstance(action, dict) else {}, by_name.by_time)
    # Newest occurrence first: a later occurrence's attempts are the nearer ones to its own times.
    groups = [
        Group(index, _ran(attempts, by_name.named[index]))
        if index in by_name.named
        else Group(index, [a.index for a in placer.chain(properties(occurrences[index]))])
        for index in order
    ]
    groups.extend(Group(None, _ran(attempts, indexes)) for indexes in by_name.elsewhere.values())
    for left in placer.free if unplaced else []:
        if left.due is None or left.due >= floor:
            groups.append(Group(None, [left.index]))
    return sorted(groups, key=lambda g: _when(g, occurrences, attempts), reverse=True)


def answer(body: bytes) -> tuple[int, dict[str, Any]]:
    try:
        document = json.loads(body or b"{}")
    except ValueError:
        document = None
    lists = [document.get(name) if isinstance(document, dict) else None for name in ("occurrences", "attempts")]
    action = document.get("action") if isinstance(document, dict) else None
    if not all(isinstance(items, list) and len(items) <= MAX_ENTRIES for items in lists) or not isinstance(
        action, dict | None
    ):
        return 400, {
            "error": {
                "code": "BadRequest",
                "message": f"occurrences and attempts: lists of at most {MAX_ENTRIES} history entries are "
                "required; action, when given, an object.",
            }
        }
    return 200, {"value": [g.to_json() for g in group(lists[0] or [], lists[1] or [], action)]}
