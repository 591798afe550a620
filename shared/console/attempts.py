"""Every attempt of an occurrence under it: the rule the CLI (`jobs history`, `jobs ledger`) and the console's job
page share to put the attempts (the newer api-version's GET .../attempts: one entry per attempt, each retry, the
error action) under the occurrences of its ledger (one entry per occurrence).

An attempt names its occurrence as the occurrence's ledger entry does: `executionTag` (every attempt's row holds
it), `occurrenceTime` and `trigger` (rows written since they are kept). It goes under the listed occurrence so
named, exactly, however occurrences overlapped and whatever their retry policy was. An entry naming none (2016-03-01
history's) is placed, under an occurrence none of whose attempts named it, by the executor's arithmetic
(shared/executor/attempts.py, shared/store/ledger.py) read back from times both lists show: a ledger entry has
the `startTime`, `endTime` and `retryCount` of its latest main-action attempt; retry k was due `delay(k-1)` (its
retry policy's) after attempt k-1 ended, as its `expectedExecutionTime` says; the error action was due the
instant the last main attempt ended, its retries as above; all have the occurrence's `repeatCount`. So by an
exact time where one exists; where the policy changed since (or a polled attempt waited for a limit), by the
nearest earlier end with the same retry and repeat counts, which can mistake two overlapping occurrences.
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
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from ..model import RetryPolicy
from ..retry import MAIN_ACTION_DEFAULT, EffectiveRetry, effective_retry

MAX_ENTRIES = 1000  # of each list: a job keeps at most 1,000 of each (shared/retention.py)
_SAME = timedelta(milliseconds=1)  # storage may round what one record wrote to two rows alike; never by more
_MAIN, _ERROR = "mainaction", "erroraction"
_EARLIEST = datetime.min.replace(tzinfo=UTC)


@dataclass
class Group:
    occurrence: int | None
    attempts: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"occurrence": self.occurrence, "attempts": self.attempts}


@dataclass(frozen=True)
class _Attempt:
    index: int
    action: str
    status: str
    retry: int
    repeat: int
    due: datetime | None
    start: datetime | None
    end: datetime | None


def _properties(entry: Any) -> dict[str, Any]:
    properties = entry.get("properties") if isinstance(entry, dict) else None
    return properties if isinstance(properties, dict) else {}


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _same(a: datetime | None, b: datetime | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= _SAME


def _retry(policy: Any, default: EffectiveRetry | None) -> EffectiveRetry | None:
    """The action's effective retry policy; None when it cannot be read (then only nearest times place)."""
    if policy is None:
        return effective_retry(None, default)
    try:
        return effective_retry(RetryPolicy.model_validate(policy), default)
    except ValidationError:
        return None


def _is_attempt(p: dict[str, Any]) -> bool:
    """Not a note (a Postponed entry of 2016-03-01 history)."""
    return str(p.get("actionName", "")).lower() in (_MAIN, _ERROR) and str(p.get("status", "")).lower() != "postponed"


Identity = tuple[str, ...]


def _due(p: dict[str, Any]) -> datetime:
    """When an attempt was due; one that does not say is kept (as due now)."""
    return _time(p.get("expectedExecutionTime")) or datetime.max.replace(tzinfo=UTC)


def _names(p: dict[str, Any]) -> list[Identity]:
    """What names an entry's occurrence: its execution tag, then its instant and trigger."""
    found: list[Identity] = []
    if isinstance(p.get("executionTag"), str) and p["executionTag"]:
        found.append(("tag", p["executionTag"]))
    at = _time(p.get("occurrenceTime"))
    if at is not None and isinstance(p.get("trigger"), str) and p["trigger"]:
        found.append(("at", at.isoformat(), p["trigger"].lower()))
    return found


def _ran(attempts: list[Any], indexes: list[int]) -> list[int]:
    """The attempts of one occurrence in the order they ran: the main action's, then the error action's."""

    def order(i: int) -> tuple[int, int, datetime]:
        p = _properties(attempts[i])
        kind = 1 if str(p.get("actionName", "")).lower() == _ERROR else 0
        return kind, _int(p.get("retryCount")), _time(p.get("startTime")) or _EARLIEST

    return sorted(indexes, key=order)


class _Placer:
    def __init__(self, attempts: list[Any], action: dict[str, Any], indexes: list[int]) -> None:
        """Places the attempts at `indexes` by their times."""
        self.free: list[_Attempt] = []
        for index in indexes:
            p = _properties(attempts[index])
            kind = str(p.get("actionName", "")).lower()
            self.free.append(
                _Attempt(
                    index,
                    kind,
                    str(p.get("status", "")),
                    _int(p.get("retryCount")),
                    _int(p.get("repeatCount")),
                    _time(p.get("expectedExecutionTime")),
                    _time(p.get("startTime")),
                    _time(p.get("endTime")),
                )
            )
        found = action.get("errorAction")
        error_action: dict[str, Any] = found if isinstance(found, dict) else {}
        self.retries = {
            _MAIN: _retry(action.get("retryPolicy"), MAIN_ACTION_DEFAULT),
            _ERROR: _retry(error_action.get("retryPolicy"), None),
        }

    def _take(self, found: _Attempt | None) -> _Attempt | None:
        if found is not None:
            self.free.remove(found)
        return found

    def latest(self, retry: int, start: datetime | None, end: datetime | None) -> _Attempt | None:
        """The main-action attempt a ledger entry was written from."""
        return self._take(
            next(
                (
                    a
                    for a in self.free
                    if a.action == _MAIN and a.retry == retry and _same(a.start, start) and _same(a.end, end)
                ),
                None,
            )
        )

    def before(self, kind: str, retry: int, repeat: int, due: datetime | None, exact: bool) -> _Attempt | None:
        """Attempt `retry` of `kind`, the one before an attempt due at `due` (exactly its delay before, when
        `exact` and the policy is known; else the nearest earlier end)."""
        candidates = [
            a
            for a in self.free
            if a.action == kind and a.retry == retry and a.repeat == repeat and a.end is not None
            if due is None or a.end <= due + _SAME
        ]
        policy = self.retries[kind]
        if exact and due is not None and policy is not None:
            wanted = due - policy.delay(retry)
            for a in candidates:
                if _same(a.end, wanted):
                    return self._take(a)
        return self._take(max(candidates, key=lambda a: a.end or _EARLIEST, default=None))

    def after(self, kind: str, retry: int, repeat: int, ended: datetime, delay: timedelta | None) -> _Attempt | None:
        """Attempt `retry` of `kind`, due `delay` after `ended` (exactly, when known; else the first due after)."""
        candidates = [
            a
            for a in self.free
            if a.action == kind and a.retry == retry and a.repeat == repeat and a.due is not None
            if a.due >= ended - _SAME
        ]
        if delay is not None:
            for a in candidates:
                if _same(a.due, ended + delay):
                    return self._take(a)
        if retry == 0:
            return None  # an error action's first attempt is due the instant the main action ended: exactly
        return self._take(min(candidates, key=lambda a: a.due or _EARLIEST, default=None))

    def chain(self, entry: dict[str, Any]) -> list[_Attempt]:
        """The attempts of one occurrence, in the order they ran."""
        attempts, last = _int(entry.get("attempts")), _int(entry.get("retryCount"))
        if attempts <= 0:
            return []  # it did not run: skipped, postponed, or waiting for its first attempt
        repeat = _int(entry.get("repeatCount"))
        running = str(entry.get("status", "")).lower() == "running"
        mains: list[_Attempt] = []
        if running:  # its latest attempt is still polled: not in history yet, started at the entry's startTime
            due, exact = _time(entry.get("startTime")), False
        else:
            found = self.latest(last, _time(entry.get("startTime")), _time(entry.get("endTime")))
            if found is None:
                return []  # its attempts are gone (pruned) or on no page read
            mains.append(found)
            due, exact = found.due, True
        for retry in range(last - 1, -1, -1):
            earlier = self.before(_MAIN, retry, repeat, due, exact)
            if earlier is None:
                break
            mains.insert(0, earlier)
            due, exact = earlier.due, True
        if running or not mains or mains[-1].status.lower() != "failed":
            return mains
        errors: list[_Attempt] = []
        ended = mains[-1].end
        policy = self.retries[_ERROR]
        while ended is not None:
            delay = timedelta(0) if not errors else (policy.delay(len(errors) - 1) if policy else None)
            found = self.after(_ERROR, len(errors), repeat, ended, delay)
            if found is None:
                break
            errors.append(found)
            ended = found.end if found.status.lower() == "failed" else None
        return mains + errors


def _newest(entry: Any, key: str) -> datetime:
    return _time(_properties(entry).get(key)) or _EARLIEST


def group(occurrences: list[Any], attempts: list[Any], action: Any = None, unplaced: bool = True) -> list[Group]:
    """The occurrences, newest first, each with its attempts in order; with `unplaced`, the attempts of an
    occurrence not listed are a group of their own among them (except those of an occurrence older than the
    oldest listed: another page's)."""
    listed: dict[Identity, int] = {}
    for index, entry in enumerate(occurrences):
        for identity in _names(_properties(entry)):
            listed.setdefault(identity, index)
    order = sorted(range(len(occurrences)), key=lambda i: _newest(occurrences[i], "occurrenceTime"), reverse=True)
    oldest = _newest(occurrences[order[-1]], "occurrenceTime") if order else _EARLIEST
    named: dict[int, list[int]] = {}
    elsewhere: dict[Identity, list[int]] = {}
    by_time: list[int] = []
    for index, entry in enumerate(attempts):
        p = _properties(entry)
        if not _is_attempt(p):
            continue  # a note, not an attempt
        names = _names(p)
        if not names:
            by_time.append(index)
        elif names[0] in listed:  # its tag when it has one: a tag that differs is another occurrence
            named.setdefault(listed[names[0]], []).append(index)
        elif unplaced and (_time(p.get("occurrenceTime")) or _due(p)) >= oldest - _SAME:
            elsewhere.setdefault(names[0], []).append(index)
    placer = _Placer(attempts, action if isinstance(action, dict) else {}, by_time)
    groups: list[Group] = []
    # Newest occurrence first: a later occurrence's attempts are the nearer ones to its own times.
    for index in order:
        if index in named:
            groups.append(Group(index, _ran(attempts, named[index])))
        else:
            groups.append(Group(index, [a.index for a in placer.chain(_properties(occurrences[index]))]))
    groups.extend(Group(None, _ran(attempts, indexes)) for indexes in elsewhere.values())
    for left in placer.free if unplaced else []:
        if left.due is None or left.due >= oldest - _SAME:
            groups.append(Group(None, [left.index]))

    def when(g: Group) -> datetime:
        if g.occurrence is not None:
            return _newest(occurrences[g.occurrence], "occurrenceTime")
        first = _properties(attempts[g.attempts[0]])
        return _time(first.get("occurrenceTime")) or _time(first.get("startTime")) or _EARLIEST

    return sorted(groups, key=when, reverse=True)


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
