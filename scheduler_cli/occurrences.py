"""`scheduler jobs occurrences|what-if|backfill`: the newer api-version's commands for one job.

- occurrences: the next occurrences as the engine will fire them, with notes (DST gap or fold, the end, the
  missed-run policy);
- what-if: PUT (or, with --patch, PATCH) a definition with whatIf=true: the job as it would be stored and its
  next occurrences; nothing is written;
- backfill: run the job's occurrences of a past interval again (from inclusive, to exclusive);
(`jobs ledger`, the newer version's history, is history.py's.)
`register(app)` adds them to the `jobs` group (main.py).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from shared.model.durations import parse_duration
from shared.model.versions import PREVIEW as PREVIEW_API_VERSION

from .concurrency import RunOverlapOption
from .context import TIME_FORMATS, guarded, options
from .jobs import Collection, File, Group, Name, _definition, _path
from .output import emit_json, emit_message, emit_table

NEWER = {"api-version": PREVIEW_API_VERSION}


def _instant(value: datetime | None) -> str | None:
    return None if value is None else value.replace(tzinfo=value.tzinfo or UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _back_from_now(value: str) -> datetime:
    """An instant as given, or a duration (P7D, PT6H) taken back from now: a README line that never goes stale."""
    try:
        if value.upper().startswith("P"):
            return datetime.now(UTC) - parse_duration(value.upper())
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise typer.BadParameter(f"{value!r} is neither an ISO 8601 instant nor a duration such as P7D.") from exc


def _notes(notes: list[dict[str, Any]] | None) -> str:
    return " ".join(str(n.get("message") or n.get("code")) for n in notes or []) or "-"


def _occurrences(title: str, answer: dict[str, Any]) -> None:
    if answer.get("notes"):
        emit_message(_notes(answer["notes"]))
    emit_table(
        title,
        ["#", "Occurrence (UTC)", "Fires (UTC)", "Notes"],
        [
            (i, o.get("occurrenceTime"), o.get("fireTime"), _notes(o.get("notes")))
            for i, o in enumerate(answer.get("value") or [], 1)
        ],
    )


def occurrences(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    count: int = typer.Option(10, "--count", min=1, max=1000, help="How many."),
    since: datetime = typer.Option(None, "--from", formats=TIME_FORMATS, help="From this instant (default now)."),
) -> None:
    """The job's next occurrences as the engine will fire them, with notes."""
    answer = (
        options(ctx)
        .client()
        .call(
            "GET",
            f"{_path(ctx, group, collection, name)}/occurrences",
            query={**NEWER, "count": count, "from": _instant(since)},
        )
    )
    if options(ctx).json:
        emit_json(answer)
    else:
        _occurrences(f"Next occurrences of {name}", answer)


def what_if(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    file: Path = File,
    patch: bool = typer.Option(False, "--patch", help="PATCH instead of PUT."),
    count: int = typer.Option(10, "--count", min=1, max=1000, help="Occurrences to show."),
) -> None:
    """What a create, replace (or --patch) would store and fire; nothing is written."""
    answer = (
        options(ctx)
        .client()
        .call(
            "PATCH" if patch else "PUT",
            _path(ctx, group, collection, name),
            _definition(ctx, file),
            query={**NEWER, "whatIf": "true", "count": count},
        )
    )
    if options(ctx).json:
        emit_json(answer)
        return
    state = ((answer.get("job") or {}).get("properties") or {}).get("state")
    emit_message(f"What-if: {answer.get('changeType')} job {name} (state {state}); nothing was written.")
    _occurrences("Its next occurrences", answer.get("occurrences") or {})


def backfill(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    since: str = typer.Option(
        ..., "--from", help="The interval's start (inclusive): an instant, or a duration back from now (P7D)."
    ),
    until: str | None = typer.Option(
        None, "--to", help="The interval's end (exclusive, not after now; default now): an instant or a duration."
    ),
    overlap: str | None = RunOverlapOption,
) -> None:
    """Run the job's occurrences of a past interval again, each with an identity of its own."""
    answer = (
        options(ctx)
        .client()
        .call(
            "POST",
            f"{_path(ctx, group, collection, name)}/backfill",
            {"from": _instant(_back_from_now(since)), "to": _instant(_back_from_now(until or "PT0S"))},
            query={**NEWER, **({"overlapPolicy": overlap} if overlap else {})},
        )
    )
    if options(ctx).json:
        emit_json(answer)
        return
    emit_table(
        f"Backfill of {name}: queued",
        ["Occurrence (UTC)", "Fires (UTC)", "Execution tag"],
        [(o.get("occurrenceTime"), o.get("fireTime"), o.get("executionTag")) for o in answer.get("value") or []],
    )


_EXAMPLES = {
    "occurrences": "scheduler jobs occurrences -g my-rg -c my-jobs -n ping --count 20",
    "what-if": "scheduler jobs what-if -g my-rg -c my-jobs -n ping -f ping.json",
    "backfill": "scheduler jobs backfill -g my-rg -c my-jobs -n ping --from P14D",
}


def register(app: typer.Typer) -> None:
    for command, name in (
        (occurrences, "occurrences"),
        (what_if, "what-if"),
        (backfill, "backfill"),
    ):
        app.command(name, epilog=f"Example: {_EXAMPLES[name]}")(guarded(command))
