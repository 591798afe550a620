"""`scheduler jobs why`: what happened, or will happen, to one instant of a job, and the rule that decided (issue 39;
newer api-version only).

Contract: it asks the API's explain (`GET .../jobs/{job}/occurrences/{instant}`) and prints its verdict (Ran,
Failed, Running, Waiting, Skipped, Postponed, WillRun, WillNotRun, NotAnOccurrence, NoRecord), reason and
message, then what else the answer tells (when it fires or fired, status, attempts, the exception or pause that
decided, what it waited for, run-now and backfill runs at the same instant) and, for an instant that is not an
occurrence, the nearest ones. `-o json` prints the answer whole. The instant is read as the API reads one
(times.py `instant`): without an offset, UTC.
`register(app)` adds it to the `jobs` group (main.py).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import typer

from .context import guarded, options
from .jobs import Collection, Group, Name, _path
from .occurrence_control import INSTANT_HELP, PLAIN, instant_argument
from .occurrences import NEWER
from .output import emit_fields, emit_json
from .times import labelled


def _decided(answer: dict[str, Any], zone: str | None) -> list[tuple[str, Any]]:
    """The members beside verdict, reason and message that the answer carries, in words."""
    rows: list[tuple[str, Any]] = []
    if answer.get("fireTime"):
        rows.append(
            (
                "fires" if answer.get("verdict") in ("WillRun", "Waiting") else "fired",
                labelled(answer["fireTime"], zone),
            )
        )
    for key, label in (
        ("status", "status"),
        ("attempts", "attempts"),
        ("waited", "waited"),
        ("waitedFor", "waited for"),
    ):
        if answer.get(key) not in (None, "", []):
            rows.append((label, answer[key]))
    exception = answer.get("exception")
    if isinstance(exception, dict):
        moved = f" to {labelled(exception['moveTo'], zone)}" if exception.get("moveTo") else ""
        note = f": {exception['note']}" if exception.get("note") else ""
        rows.append(("exception", f"{exception.get('type')}{moved}{note}"))
    pause = answer.get("pause")
    if isinstance(pause, dict):
        note = f": {pause['note']}" if pause.get("note") else ""
        rows.append(("pause", f"until {labelled(pause.get('until'), zone)}{note}"))
    manual = [m for m in answer.get("manualRuns") or [] if isinstance(m, dict)]
    if manual:  # occurrences of their own at the same instant, never this one
        runs = [f"{m.get('trigger')} {m.get('status')} ({m.get('attempts')} attempts)" for m in manual]
        rows.append(("also at this instant", "; ".join(runs)))
    if answer.get("nearest"):
        rows.append(("nearest occurrences", ", ".join(labelled(t, zone) for t in answer["nearest"])))
    return rows


def why(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    at: str = typer.Argument(..., metavar="INSTANT", click_type=PLAIN, help=f"The instant asked about: {INSTANT_HELP}"),
) -> None:
    """Why an instant of the job ran, did not, or will or will not run: the verdict, the rule that decided and,
    for an instant that is not an occurrence, the nearest ones."""
    path = _path(ctx, group, collection, name)
    when = instant_argument(at, "INSTANT")
    opts = options(ctx)
    answer = opts.client().call("GET", f"{path}/occurrences/{quote(when, safe=':')}", query=NEWER) or {}
    if opts.json:
        emit_json(answer)
        return
    zone = opts.zone(None) if opts.times_in else opts.zone(opts.client().call("GET", path, query=NEWER))
    emit_fields(
        f"{name} at {labelled(answer.get('occurrenceTime') or when, zone)}",
        [
            ("verdict", answer.get("verdict")),
            ("reason", answer.get("reason") or "-"),
            ("message", answer.get("message") or "-"),
            *_decided(answer, zone),
        ],
    )


def register(app: typer.Typer) -> None:
    app.command("why", epilog="Example: scheduler jobs why -g my-rg -c my-jobs -n ping 2026-12-24T09:00:00Z")(
        guarded(why)
    )
