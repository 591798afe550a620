"""`scheduler jobs skip|move|add-run|exceptions|unexcept|pause|resume`: control over single occurrences of one job
and a pause that ends by itself (issue 39; newer api-version only).

Contract:
- Exceptions and the pause are members of the job (`properties.exceptions`, a list of `{type Skip|Move|Add,
  occurrence, moveTo, note}`; `properties.pause`, `{until, note}`). Each command reads the job (GET) and writes
  the whole new list, or the pause, back in a PATCH (a PATCH replaces the list whole; a null pause removes it).
  Nothing guards the two calls against a write between them (the API has no If-Match on jobs): the later write
  wins, as in the console.
- Skipping or moving an occurrence already skipped or moved replaces that exception (a new note, a new target);
  `unexcept` removes each exception naming the instant (its occurrence, or a move's target) and is an error
  (exit code 1) when none does.
- Instants on the command line are read as the API's are (times.py `instant`): ISO 8601, with `Z` or an offset;
  without one, UTC. `pause --until` takes a duration too (PT2H, P1D), counted forward from now.
- The API judges what is written: an exception for an instant that is not an occurrence is its 400 naming the
  nearest ones, shown as every API error (one line, exit code 1).
`register(app)` adds them to the `jobs` group (main.py).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import typer

from shared.model.durations import parse_duration

from .client import API_ERROR, USAGE_ERROR, CliError
from .context import guarded, options
from .jobs import Collection, Group, Name, _path
from .occurrences import NEWER
from .output import emit_json, emit_message, emit_table
from .times import instant, labelled

try:  # recent Typer ships its own copy of Click (as context.py's imports)
    from typer._click.types import StringParamType
except ImportError:  # pragma: no cover - depends on the installed Typer
    from click.types import StringParamType  # type: ignore[no-redef,import-not-found,unused-ignore]


class _Plain(StringParamType):
    """Text whose help shows the argument's name alone (Typer would print `<str>` beside it)."""

    def get_metavar(self, *args: Any, **kwargs: Any) -> str:
        return ""


PLAIN = _Plain()
INSTANT_HELP = "ISO 8601, e.g. 2026-12-24T09:00:00Z or 2026-12-24T10:00+01:00; without an offset, UTC."
Note = typer.Option(None, "--note", metavar="TEXT", help="Why: shown in preview, in the ledger and on the job.")


def instant_argument(text: Any, what: str) -> str:
    """`text` as the API's UTC instant; a usage error naming `what` when it is no instant."""
    when = instant(text) if isinstance(text, str) and text.strip() else None
    if when is None:
        raise CliError("InvalidOption", f"{what} {text!r}: write an instant, {INSTANT_HELP}", USAGE_ERROR)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ahead(text: str) -> str:
    """An instant, or a duration (PT2H, P1D) counted forward from now."""
    if text.strip().upper().startswith("P"):
        try:
            return (datetime.now(UTC) + parse_duration(text.strip().upper())).strftime("%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            raise CliError(
                "InvalidOption", f"--until {text!r}: not a duration such as PT2H or P1D", USAGE_ERROR
            ) from None
    return instant_argument(text, "--until")


def _read(ctx: typer.Context, path: str) -> dict[str, Any]:
    job = options(ctx).client().call("GET", path, query=NEWER)
    return job if isinstance(job, dict) else {}


def _exceptions(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list((job.get("properties") or {}).get("exceptions") or [])


def _same(a: Any, b: Any) -> bool:
    x, y = instant(a), instant(b)
    return x is not None and x == y


Say = Callable[[str | None], str]  # what a command did, in words, with times in the zone given


def _write(ctx: typer.Context, path: str, members: dict[str, Any], say: Say) -> None:
    job = options(ctx).client().call("PATCH", path, {"properties": members}, query=NEWER)
    if options(ctx).json:
        emit_json(job)
    else:
        emit_message(say(options(ctx).zone(job)))


def _except(ctx: typer.Context, path: str, exception: dict[str, Any], say: Say) -> None:
    """The job's exceptions with `exception` in place of one of its type about the same occurrence."""
    job = _read(ctx, path)
    kept = [
        e
        for e in _exceptions(job)
        if not (
            str(e.get("type", "")).lower() == exception["type"].lower()
            and _same(e.get("occurrence"), exception["occurrence"])
        )
    ]
    _write(ctx, path, {"exceptions": [*kept, {k: v for k, v in exception.items() if v is not None}]}, say)


def _next_occurrence(ctx: typer.Context, path: str, name: str) -> str:
    answer = options(ctx).client().call("GET", f"{path}/occurrences", query={**NEWER, "count": 1}) or {}
    found = next(iter(answer.get("value") or []), None)
    if not found:
        raise CliError("NoNextOccurrence", f"job {name} has no occurrence ahead to skip", API_ERROR)
    return str(found["occurrenceTime"])


def skip(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    occurrence: str | None = typer.Argument(
        None, metavar="OCCURRENCE", click_type=PLAIN, help=f"The occurrence to skip: {INSTANT_HELP}"
    ),
    next_one: bool = typer.Option(False, "--next", help="Skip the next occurrence (as `jobs occurrences` lists it)."),
    note: str | None = Note,
) -> None:
    """Skip one occurrence: it does not run, the recurrence is untouched (`unexcept` cancels it)."""
    if (occurrence is None) == (not next_one):
        raise CliError("InvalidOption", "give the OCCURRENCE to skip or --next (one of them)", USAGE_ERROR)
    path = _path(ctx, group, collection, name)
    when = _next_occurrence(ctx, path, name) if next_one else instant_argument(occurrence, "OCCURRENCE")
    _except(
        ctx,
        path,
        {"type": "Skip", "occurrence": when, "note": note},
        lambda zone: f"Job {name}: the occurrence at {labelled(when, zone)} is skipped.",
    )


def move(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    occurrence: str = typer.Argument(
        ..., metavar="OCCURRENCE", click_type=PLAIN, help=f"The occurrence to move: {INSTANT_HELP}"
    ),
    to: str = typer.Option(..., "--to", metavar="INSTANT", help=f"Where it runs instead: {INSTANT_HELP}"),
    note: str | None = Note,
) -> None:
    """Move one occurrence to another instant: it runs there, once, instead."""
    path = _path(ctx, group, collection, name)
    when, target = instant_argument(occurrence, "OCCURRENCE"), instant_argument(to, "--to")
    _except(
        ctx,
        path,
        {"type": "Move", "occurrence": when, "moveTo": target, "note": note},
        lambda zone: f"Job {name}: the occurrence at {labelled(when, zone)} is moved to {labelled(target, zone)}.",
    )


def add_run(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    at: str = typer.Argument(
        ..., metavar="INSTANT", click_type=PLAIN, help=f"When the extra run fires: {INSTANT_HELP}"
    ),
    note: str | None = Note,
) -> None:
    """Add an extra run at an instant, outside the recurrence (it runs once, with its own identity)."""
    path = _path(ctx, group, collection, name)
    when = instant_argument(at, "INSTANT")
    _except(
        ctx,
        path,
        {"type": "Add", "occurrence": when, "note": note},
        lambda zone: f"Job {name}: an extra run is added at {labelled(when, zone)}.",
    )


def exceptions(ctx: typer.Context, group: str = Group, collection: str = Collection, name: str = Name) -> None:
    """The job's exceptions: the occurrences skipped or moved and the runs added."""
    job = _read(ctx, _path(ctx, group, collection, name))
    found = sorted(_exceptions(job), key=lambda e: str(e.get("occurrence")))
    if options(ctx).json:
        emit_json(found)
        return
    zone = options(ctx).zone(job)
    emit_table(
        f"Exceptions of {name}",
        ["Type", "Occurrence", "Moved to", "Note"],
        [
            (e.get("type"), labelled(e.get("occurrence"), zone), labelled(e.get("moveTo"), zone), e.get("note") or "-")
            for e in found
        ],
        nowrap=(1, 2),
    )


def unexcept(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    at: str = typer.Argument(
        ...,
        metavar="INSTANT",
        click_type=PLAIN,
        help=f"The instant the exception names (its occurrence, or a move's --to): {INSTANT_HELP}",
    ),
) -> None:
    """Cancel the exception naming an instant: the occurrence runs as the recurrence says again."""
    path = _path(ctx, group, collection, name)
    when = instant_argument(at, "INSTANT")
    job = _read(ctx, path)
    every = _exceptions(job)
    kept = [e for e in every if not (_same(e.get("occurrence"), when) or _same(e.get("moveTo"), when))]
    zone = options(ctx).zone(job)
    if len(kept) == len(every):
        named = ", ".join(labelled(e.get("occurrence"), zone) for e in every) or "none"
        raise CliError(
            "NoSuchException", f"no exception of job {name} names {labelled(when, zone)} (its exceptions: {named})"
        )
    _write(ctx, path, {"exceptions": kept}, lambda z: f"Job {name}: the exception at {labelled(when, z)} is cancelled.")


def pause(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    until: str = typer.Option(
        ...,
        "--until",
        metavar="INSTANT|DURATION",
        help=f"The job resumes by itself then: an instant ({INSTANT_HELP}) or a duration from now (PT2H, P1D).",
    ),
    note: str | None = typer.Option(None, "--note", metavar="TEXT", help="Why: shown on the job and in the ledger."),
) -> None:
    """Pause the job until an instant: no occurrence due before it runs (each is named in the ledger, with the
    note); then it resumes by itself, and its missed-run policy decides what of the paused occurrences runs."""
    path = _path(ctx, group, collection, name)
    end = _ahead(until)
    members = {"pause": {k: v for k, v in (("until", end), ("note", note)) if v is not None}}
    _write(ctx, path, members, lambda zone: f"Job {name} is paused until {labelled(end, zone)}.")


def resume(ctx: typer.Context, group: str = Group, collection: str = Collection, name: str = Name) -> None:
    """End the job's pause now (its missed-run policy decides what of the paused occurrences runs)."""
    path = _path(ctx, group, collection, name)
    job = _read(ctx, path)
    if (job.get("properties") or {}).get("pause"):
        _write(ctx, path, {"pause": None}, lambda _: f"Job {name} is resumed.")
    elif options(ctx).json:
        emit_json(job)
    else:
        emit_message(f"Job {name} is not paused; nothing changed.")


_EXAMPLES = {
    "skip": "scheduler jobs skip -g my-rg -c my-jobs -n ping 2026-12-24T09:00:00Z --note 'holiday' (or --next)",
    "move": "scheduler jobs move -g my-rg -c my-jobs -n ping 2026-12-24T09:00:00Z --to 2026-12-23T15:00:00Z",
    "add-run": "scheduler jobs add-run -g my-rg -c my-jobs -n ping 2026-12-31T18:00:00Z --note 'year end'",
    "exceptions": "scheduler jobs exceptions -g my-rg -c my-jobs -n ping",
    "unexcept": "scheduler jobs unexcept -g my-rg -c my-jobs -n ping 2026-12-24T09:00:00Z",
    "pause": "scheduler jobs pause -g my-rg -c my-jobs -n ping --until PT2H --note 'target upgrade'",
    "resume": "scheduler jobs resume -g my-rg -c my-jobs -n ping",
}


def register(app: typer.Typer) -> None:
    for command, name in (
        (skip, "skip"),
        (move, "move"),
        (add_run, "add-run"),
        (exceptions, "exceptions"),
        (unexcept, "unexcept"),
        (pause, "pause"),
        (resume, "resume"),
    ):
        app.command(name, epilog=f"Example: {_EXAMPLES[name]}")(guarded(command))
