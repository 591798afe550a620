"""`scheduler dead-letters list|show|replay|purge`: a collection's dead letters (newer api-version;
shared/api/dead_letters.py says what each call does).

- `list -g RG -c JC`: newest occurrence first (every page), one row each: id, job, occurrence, state, replays,
  the last attempt's outcome.
- `show ID`: the dead letter and its occurrence's attempts (its replays' too).
- `replay ID... | --all`: queues each again with its original identity; one line per id (exit code 1 when one
  was refused). `--all` replays up to 100 per call and says when more are left.
- `purge ID... | --all`: removes them (those whose replay is in flight are kept).
`-o json` prints the API's answers.
"""

from __future__ import annotations

from typing import Any

import typer

from shared.model.versions import PREVIEW

from .client import CliError, collection_path
from .context import guarded, options
from .history import cut
from .jobs import Collection, Group
from .occurrence_control import PLAIN
from .output import emit_json, emit_message, emit_table

app = typer.Typer(help="Dead letters: occurrences whose run ended failed for good.", no_args_is_help=True)
NEWER = {"api-version": PREVIEW}
Ids = typer.Argument(None, metavar="ID...", click_type=PLAIN, help="Dead letter ids (the `id` column of `list`).")
All = typer.Option(False, "--all", help="Every dead letter of the collection.")


def _path(ctx: typer.Context, group: str, collection: str) -> str:
    return f"{collection_path(options(ctx).require_subscription(), group, collection)}/deadLetters"


def _ids_or_all(ids: list[str] | None, every: bool) -> list[str]:
    if bool(ids) == every:
        raise CliError("BadArguments", "name dead letter ids or --all (not both)", 2)
    return list(ids or [])


def _row(letter: dict[str, Any]) -> list[str]:
    p = letter.get("properties") or {}
    return [
        str(letter.get("name", "")).rsplit("/", 1)[-1],
        str(p.get("jobName", "")),
        str(p.get("occurrenceTime", "")),
        str(p.get("state", "")),
        str(p.get("replayCount", 0)),
        cut(f"{p.get('actionName', '')} {p.get('status', '')}: {p.get('message', '')}", 100),
    ]


@app.command("list", epilog="Example: scheduler dead-letters list -g my-rg -c my-jobs")
@guarded
def list_letters(ctx: typer.Context, group: str = Group, collection: str = Collection) -> None:
    """The collection's dead letters, newest occurrence first."""
    letters = options(ctx).client().list_all(_path(ctx, group, collection), NEWER)
    if options(ctx).json:
        emit_json(letters)
        return
    if not letters:
        emit_message("No dead letters.")
        return
    columns = ["id", "job", "occurrence", "state", "replays", "last outcome"]
    emit_table(None, columns, [_row(letter) for letter in letters], nowrap=(0, 2))


@app.command("show", epilog="Example: scheduler dead-letters show -g my-rg -c my-jobs 06390...-1a2b3c4d5e6f")
@guarded
def show(
    ctx: typer.Context,
    dead_letter: str = typer.Argument(..., metavar="ID", click_type=PLAIN, help="The dead letter's id."),
    group: str = Group,
    collection: str = Collection,
) -> None:
    """One dead letter and its occurrence's attempts."""
    letter = options(ctx).client().call("GET", f"{_path(ctx, group, collection)}/{dead_letter}", query=NEWER) or {}
    if options(ctx).json:
        emit_json(letter)
        return
    p = letter.get("properties") or {}
    emit_table(None, ["id", "job", "occurrence", "state", "replays", "last outcome"], [_row(letter)], nowrap=(0, 2))
    emit_message(f"executionTag {p.get('executionTag')}, trigger {p.get('trigger')}, ended {p.get('endTime')}")
    attempts = [a.get("properties") or {} for a in p.get("attempts") or []]
    rows = [
        [
            str(a.get("startTime", "")),
            str(a.get("actionName", "")),
            str(a.get("retryCount", 0)),
            str(a.get("status", "")),
            cut(a.get("message")),
        ]
        for a in attempts
    ]
    emit_table("Attempts", ["started", "action", "retry", "status", "answer"], rows, nowrap=(0,))


@app.command("replay", epilog="Example: scheduler dead-letters replay -g my-rg -c my-jobs --all")
@guarded
def replay(
    ctx: typer.Context,
    ids: list[str] | None = Ids,
    every: bool = All,
    group: str = Group,
    collection: str = Collection,
) -> None:
    """Queue dead letters again, each with its original identity, under the job's current definition."""
    named = _ids_or_all(ids, every)
    body: dict[str, Any] = {"all": True} if every else {"ids": named}
    answer = options(ctx).client().call("POST", f"{_path(ctx, group, collection)}/replay", body, NEWER) or {}
    if options(ctx).json:
        emit_json(answer)
    else:
        for item in answer.get("value") or []:
            error = (item.get("error") or {}).get("message")
            emit_message(f"{item.get('id')}: {'replay queued' if item.get('status') == 200 else f'refused: {error}'}")
        if answer.get("more"):
            emit_message("More dead letters are left: run it again.")
        if not answer.get("value"):
            emit_message("Nothing to replay.")
    if any(item.get("status") != 200 for item in answer.get("value") or []):
        raise typer.Exit(1)


@app.command("purge", epilog="Example: scheduler dead-letters purge -g my-rg -c my-jobs --all")
@guarded
def purge(
    ctx: typer.Context,
    ids: list[str] | None = Ids,
    every: bool = All,
    group: str = Group,
    collection: str = Collection,
) -> None:
    """Remove dead letters (those whose replay is in flight are kept)."""
    named = _ids_or_all(ids, every)
    client, path = options(ctx).client(), _path(ctx, group, collection)
    if every:
        answer = client.call("DELETE", path, query=NEWER) or {}
        purged, kept = int(answer.get("purged", 0)), int(answer.get("inFlight", 0))
    else:
        for dead_letter in named:
            client.call("DELETE", f"{path}/{dead_letter}", query=NEWER)
        purged, kept = len(named), 0
    if options(ctx).json:
        emit_json({"purged": purged, "inFlight": kept})
    else:
        emit_message(f"Purged {purged} dead letter(s)" + (f"; {kept} kept, their replay in flight." if kept else "."))
