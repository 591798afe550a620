"""`scheduler jobs occurrences|what-if|backfill`: the newer api-version's commands for one job.

- occurrences: the next occurrences as the engine will fire them, with notes (DST gap or fold, the end, the
  missed-run policy);
- what-if: PUT (or, with --patch, PATCH) a definition with whatIf=true: the job as it would be stored and its
  next occurrences; nothing is written. It takes `jobs create`'s flags and file (with --patch, `jobs update`'s,
  applied over the stored job), so a dry run needs no JSON file;
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

from .concurrency import ExpectOption, MissedRunOption, OverlapOption, RunOverlapOption, SpreadOption
from .context import TIME_FORMATS, guarded, options
from .job_flags import JobFlags, job_flag_options
from .job_writes import patch_body, put_body
from .jobs import Collection, Group, Name, _path
from .output import emit_json, emit_message, emit_table
from .times import labelled

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


def _occurrences(title: str, answer: dict[str, Any], zone: str | None) -> None:
    if answer.get("notes"):
        emit_message(_notes(answer["notes"]))
    emit_table(
        title,
        ["#", "Occurrence", "Fires", "Notes"],
        [
            (i, labelled(o.get("occurrenceTime"), zone), labelled(o.get("fireTime"), zone), _notes(o.get("notes")))
            for i, o in enumerate(answer.get("value") or [], 1)
        ],
    )


def _zone(ctx: typer.Context, path: str) -> str | None:
    """Where the job's times are shown (--times-in, else its own zone): the job is read only when that matters."""
    opts = options(ctx)
    if opts.json or opts.times_in:
        return opts.zone(None)
    return opts.zone(opts.client().call("GET", path, query=NEWER))


def occurrences(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    count: int = typer.Option(10, "--count", min=1, max=1000, help="How many."),
    since: datetime = typer.Option(None, "--from", formats=TIME_FORMATS, help="From this instant (default now)."),
) -> None:
    """The job's next occurrences as the engine will fire them, with notes."""
    path = _path(ctx, group, collection, name)
    answer = (
        options(ctx)
        .client()
        .call("GET", f"{path}/occurrences", query={**NEWER, "count": count, "from": _instant(since)})
    )
    if options(ctx).json:
        emit_json(answer)
    else:
        _occurrences(f"Next occurrences of {name}", answer, _zone(ctx, path))


@job_flag_options()
def what_if(
    ctx: typer.Context,
    flags: JobFlags,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    file: Path = typer.Option(None, "--file", "-f", help="JSON file (`-` for standard input); the flags win."),
    patch: bool = typer.Option(False, "--patch", help="PATCH (as `jobs update`) instead of PUT (as `jobs create`)."),
    count: int = typer.Option(10, "--count", min=1, max=1000, help="Occurrences to show."),
    overlap: str | None = OverlapOption,
    spread: str | None = SpreadOption,
    expect: str | None = ExpectOption,
    missed: str | None = MissedRunOption,
) -> None:
    """What a create or replace (or, with --patch, an update) would store and fire, from the same flags and file
    as `jobs create` (`jobs update`); nothing is written."""
    path = _path(ctx, group, collection, name)
    body = (
        patch_body(ctx, path, flags, file, overlap, spread, expect, missed)
        if patch
        else put_body(ctx, flags, file, overlap, spread, expect, missed)
    )
    answer = (
        options(ctx)
        .client()
        .call("PATCH" if patch else "PUT", path, body, query={**NEWER, "whatIf": "true", "count": count})
    )
    if options(ctx).json:
        emit_json(answer)
        return
    state = ((answer.get("job") or {}).get("properties") or {}).get("state")
    emit_message(f"What-if: {answer.get('changeType')} job {name} (state {state}); nothing was written.")
    _occurrences("Its next occurrences", answer.get("occurrences") or {}, options(ctx).zone(answer.get("job")))


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
    path = _path(ctx, group, collection, name)
    answer = (
        options(ctx)
        .client()
        .call(
            "POST",
            f"{path}/backfill",
            {"from": _instant(_back_from_now(since)), "to": _instant(_back_from_now(until or "PT0S"))},
            query={**NEWER, **({"overlapPolicy": overlap} if overlap else {})},
        )
    )
    if options(ctx).json:
        emit_json(answer)
        return
    zone = _zone(ctx, path)
    emit_table(
        f"Backfill of {name}: queued",
        ["Occurrence", "Fires", "Execution tag"],
        [
            (labelled(o.get("occurrenceTime"), zone), labelled(o.get("fireTime"), zone), o.get("executionTag"))
            for o in answer.get("value") or []
        ],
    )


_EXAMPLES = {
    "occurrences": "scheduler jobs occurrences -g my-rg -c my-jobs -n ping --count 20",
    "what-if": "scheduler jobs what-if -g my-rg -c my-jobs -n ping --uri http://127.0.0.1:8080/ping --every 1d "
    "--at 09:00 --time-zone Europe/London (or -f ping.json)",
    "backfill": "scheduler jobs backfill -g my-rg -c my-jobs -n ping --from P14D",
}


def register(app: typer.Typer) -> None:
    for command, name in (
        (occurrences, "occurrences"),
        (what_if, "what-if"),
        (backfill, "backfill"),
    ):
        app.command(name, epilog=f"Example: {_EXAMPLES[name]}")(guarded(command))
