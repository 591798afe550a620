"""`scheduler jobs history|ledger`: each occurrence of a job, newest first, and under it every attempt it made (the
first, each retry, the error action), with how it ended, or why it did not run.

The occurrences are the newer api-version's history (the ledger: one entry per occurrence); the attempts are its
attempts list (one entry per attempt, each naming its occurrence). shared/console/attempts.py places each attempt
under its occurrence, the same rule the console's job page uses. A summary line puts the attempts shown beside
the job's counters (which count attempts: `executionCount`, `failureCount`; and faulted occurrences:
`faultedCount`).

`-o json` prints the ledger's entries, each with `attemptEntries`: its attempts' entries, in the order they ran;
an attempt under no listed occurrence comes as an item of its own (its entry).
`register(app)` adds both commands to the `jobs` group (main.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import typer

from shared.console.attempts import Group as AttemptGroup
from shared.console.attempts import group
from shared.model.versions import PREVIEW

from .client import ApiClient
from .context import guarded, options
from .jobs import Collection, Group, Name, _path
from .output import emit_json, emit_message, emit_table
from .times import labelled, same_day

PAGE = 100  # the API's largest page
MOST_ATTEMPTS = 1000  # a job keeps at most 1,000 attempts (shared/retention.py)
CELL_CHARS = 160  # of a message in a table row; `-o json` has it whole


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def _occurrences(client: ApiClient, path: str, top: int, filter_: str | None) -> list[Any]:
    # With $top the API answers that many and no nextLink (paging.py): beyond one page, read pages instead.
    query = {"api-version": PREVIEW, "$filter": filter_, **({"$top": top} if top <= PAGE else {})}
    return client.list_all(f"{path}/history", query, limit=top)


def _attempts(client: ApiClient, path: str, since: datetime | None) -> list[Any]:
    """The attempts (newest first by due, each naming its occurrence), read down to `since`: an attempt is never
    due before its occurrence, so those due earlier belong to occurrences not listed."""
    items: list[Any] = []
    page = client.call("GET", f"{path}/attempts", query={"api-version": PREVIEW}) or {}
    while True:
        items.extend(page.get("value") or [])
        oldest = _time(((items[-1] if items else {}).get("properties") or {}).get("expectedExecutionTime"))
        if not page.get("nextLink") or len(items) >= MOST_ATTEMPTS or (since and oldest and oldest < since):
            return items
        page = client.call("GET", page["nextLink"]) or {}


def _lateness(p: dict[str, Any]) -> str:
    started, expected = _time(p.get("startTime")), _time(p.get("expectedExecutionTime"))
    return f"{(started - expected).total_seconds():.1f}s" if started and expected else "-"


def cut(text: Any, chars: int = CELL_CHARS) -> str:
    """One line; a longer one ends at a word with a marker saying where it is whole."""
    flat = " ".join(str(text or "").split())
    if len(flat) <= chars:
        return flat
    return f"{flat[:chars].rsplit(' ', 1)[0].rstrip()}... (-o json for all)"


def _label(p: dict[str, Any]) -> str:
    retry = int(p.get("retryCount") or 0)
    if str(p.get("actionName", "")).lower() == "erroraction":
        return "error action" + (f" retry {retry}" if retry else "")
    return f"retry {retry}" if retry else "attempt 1"


def _what_came(p: dict[str, Any], attempts: list[dict[str, Any]]) -> str:
    if not attempts:
        return cut(p.get("message")) if p.get("message") else "-"
    mains = [a for a in attempts if str(a.get("actionName", "")).lower() != "erroraction"]
    errors = len(attempts) - len(mains)
    said = f"{len(mains)} attempt{'s' if len(mains) != 1 else ''}"
    if errors:
        said += f", then the error action ({attempts[-1].get('status')})"
    return said


def _started(value: Any, on: Any, zone: str | None) -> str:
    """When an attempt started: its time of day on its occurrence's date, else date and time."""
    if _time(value) is None:
        return "-"
    return labelled(value, zone, date=not same_day(value, on, zone))


def _rows(
    groups: list[AttemptGroup], occurrences: list[Any], attempts: list[Any], ledger: bool, zone: str | None
) -> list[tuple[Any, ...]]:
    width = 7 if ledger else 6
    rows: list[tuple[Any, ...]] = []
    for g in groups:
        tried = [attempts[i].get("properties") or {} for i in g.attempts]
        at: Any = None
        if g.occurrence is not None:
            p = occurrences[g.occurrence].get("properties") or {}
            at = p.get("occurrenceTime") or p.get("expectedExecutionTime")
            waited = f"{p['waited']} ({p.get('waitedFor')})" if p.get("waited") else "-"
            head = (labelled(at, zone), p.get("trigger") or "-")
            status = p.get("status")
            if ledger:
                rows.append((*head, status, p.get("reason") or "-", waited, "", _what_came(p, tried)))
            else:
                reason = f" ({p['reason']})" if p.get("reason") else ""
                rows.append((*head, f"{status}{reason}", "", "", _what_came(p, tried)))
        else:
            rows.append(("?", "not in the ledger", *[""] * (width - 2)))
        for a in tried:
            label, status, started = f"  {_label(a)}", a.get("status"), _started(a.get("startTime"), at, zone)
            if ledger:
                rows.append(("", label, status, "", "", started, cut(a.get("message"))))
            else:
                rows.append(("", label, status, started, _lateness(a), cut(a.get("message"))))
    return rows


def _count(n: Any, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _summary(groups: list[AttemptGroup], attempts: list[Any], job: dict[str, Any]) -> str:
    shown = [(attempts[i].get("properties") or {}).get("status") for g in groups for i in g.attempts]
    listed = sum(1 for g in groups if g.occurrence is not None)
    line = (
        f"Shown: {_count(listed, 'occurrence')}, {_count(len(shown), 'attempt')} ({shown.count('Completed')} "
        f"succeeded, {shown.count('Failed')} failed)."
    )
    status = (job.get("properties") or {}).get("status")
    if status:
        line += (
            f" The job's counters, all time: {_count(status.get('executionCount', 0), 'attempt')}, "
            f"{status.get('failureCount', 0)} failed, {_count(status.get('faultedCount', 0), 'faulted occurrence')}."
        )
    return line


def _show(ctx: typer.Context, path: str, name: str, top: int, filter_: str | None, ledger: bool) -> None:
    client = options(ctx).client()
    job = client.call("GET", path) or {}
    occurrences = _occurrences(client, path, top, filter_)
    times = [_time((o.get("properties") or {}).get("occurrenceTime")) for o in occurrences]
    since = min((t for t in times if t), default=None)
    attempts = _attempts(client, path, since) if occurrences or not filter_ else []
    action = ((job.get("properties") or {}).get("action")) or {}
    groups = group(occurrences, attempts, action, unplaced=not filter_)
    if options(ctx).json:
        emit_json(
            [
                item
                for g in groups
                for item in (
                    [{**occurrences[g.occurrence], "attemptEntries": [attempts[i] for i in g.attempts]}]
                    if g.occurrence is not None
                    else [attempts[i] for i in g.attempts]
                )
            ]
        )
        return
    columns = (
        ["Occurrence", "Attempt", "Status", "Reason", "Waited", "Started", "Message"]
        if ledger
        else ["Occurrence", "Attempt", "Status", "Started", "Lateness", "Message"]
    )
    title = "Ledger" if ledger else "History"
    emit_table(
        f"{title} of {name}: each occurrence, newest first, and its attempts",
        columns,
        _rows(groups, occurrences, attempts, ledger, options(ctx).zone(job)),
        nowrap=(1, 2) if ledger else (1, 2, 4),  # times wrap at their spaces: they name a zone
    )
    emit_message(_summary(groups, attempts, job))


def history(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    top: int = typer.Option(20, "--top", min=1, max=1000, help="The newest N occurrences."),
) -> None:
    """Each occurrence, newest first, and under it every attempt: the first, each retry, the error action."""
    _show(ctx, _path(ctx, group, collection, name), name, top, None, ledger=False)


def ledger(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    top: int = typer.Option(20, "--top", min=1, max=1000, help="The newest N occurrences."),
    filter_: str = typer.Option(
        None, "--filter", help="e.g. \"status eq 'Skipped' and occurrenceTime ge 2026-03-01T00:00:00Z\"."
    ),
) -> None:
    """One entry per occurrence, newest first: what came of it (each attempt under it), or why it did not run."""
    _show(ctx, _path(ctx, group, collection, name), name, top, filter_, ledger=True)


_EXAMPLES = {
    "history": "scheduler jobs history -g my-rg -c my-jobs -n ping --top 5",
    "ledger": "scheduler jobs ledger -g my-rg -c my-jobs -n ping --top 20",
}


def register(app: typer.Typer) -> None:
    for command, name in ((history, "history"), (ledger, "ledger")):
        app.command(name, epilog=f"Example: {_EXAMPLES[name]}")(guarded(command))
