"""`scheduler jobs list|show|enable|disable|run|delete` (create and update: job_writes.py; history and ledger:
history.py)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from shared.console.schedule import ScheduleError, describe
from shared.wire_members import unknown_members

from .client import USAGE_ERROR, CliError, collection_path, job_path
from .concurrency import RunOverlapOption, async_words, missed_run_words, overlap_words
from .context import guarded, options, read_json
from .output import emit_fields, emit_json, emit_message, emit_table, warn
from .times import instant, labelled

app = typer.Typer(help="Jobs of a collection.", no_args_is_help=True)

Group = typer.Option(..., "--resource-group", "-g", help="Resource group.")
Collection = typer.Option(..., "--collection", "-c", help="Job collection name.")
Name = typer.Option(..., "--name", "-n", help="Job name.")
File = typer.Option(..., "--file", "-f", help="JSON file (`-` for standard input).")


def short_name(job: dict[str, Any]) -> str:
    return str(job.get("name", "")).rsplit("/", 1)[-1]


def words(properties: dict[str, Any]) -> str:
    try:
        return describe(properties.get("startTime"), properties.get("recurrence"))
    except ScheduleError as error:
        return f"? ({error})"


def _definition(ctx: typer.Context, file: Path) -> dict[str, Any]:
    """The file's job (or its properties, wrapped), after a warning for every member the API would ignore."""
    body = read_json(file)
    if not isinstance(body, dict):
        raise CliError("InvalidJson", f"{file}: a JSON object is required", USAGE_ERROR)
    body = body if "properties" in body else {"properties": body}
    warn([u.message() for u in unknown_members(body, options(ctx).client().schemas(), "JobDefinition")])
    return body


def _path(ctx: typer.Context, group: str, collection: str, name: str) -> str:
    return job_path(options(ctx).require_subscription(), group, collection, name)


def past_end(ctx: typer.Context, job: dict[str, Any] | None) -> str | None:
    """The warning for a job whose recurrence ends before now: the API stores it Completed (as the old service
    did), and it never runs."""
    properties = (job or {}).get("properties") or {}
    end = instant((properties.get("recurrence") or {}).get("endTime"))
    if end is None or end > datetime.now(UTC):
        return None
    return (
        f"its end time, {labelled(end, options(ctx).zone(job))}, is in the past, so the job will never run "
        f"(state {properties.get('state') or 'Completed'}); set a later end (--end) or none (--end '')"
    )


def _saved(ctx: typer.Context, job: dict[str, Any], verb: str) -> None:
    warn([w for w in [past_end(ctx, job)] if w])
    if options(ctx).json:
        emit_json(job)
    else:
        state = (job.get("properties") or {}).get("state") if job else None
        emit_message(f"Job {short_name(job) if job else ''} {verb}" + (f" (state {state})." if state else "."))


@app.command("list", epilog="Example: scheduler jobs list -g my-rg -c my-jobs --state Enabled")
@guarded
def list_jobs(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    state: str = typer.Option(None, "--state", help="Only jobs in this state (Enabled, Disabled, ...)."),
    top: int = typer.Option(None, "--top", min=1, help="At most this many jobs."),
) -> None:
    """Jobs with their state, schedule in words, next and last run, and counters."""
    opts = options(ctx)
    query = {"$filter": f"state eq '{state}'"} if state else {}
    jobs = opts.client().list_all(
        f"{collection_path(opts.require_subscription(), group, collection)}/jobs", query, limit=top
    )
    if opts.json:
        emit_json(jobs)
        return
    rows = []
    for job in jobs:
        p = job.get("properties") or {}
        s = p.get("status") or {}
        zone = opts.zone(job)
        rows.append(
            (
                short_name(job),
                p.get("state"),
                words(p),
                overlap_words(p),
                labelled(s.get("nextExecutionTime"), zone),
                labelled(s.get("lastExecutionTime"), zone),
                f"{s.get('executionCount', 0)}/{s.get('failureCount', 0)}/{s.get('faultedCount', 0)}",
            )
        )
    emit_table(
        f"Jobs of {collection}",
        ["Name", "State", "Schedule", "Overlap", "Next run", "Last run", "Attempts/failed/faulted"],
        rows,
    )


@app.command("show", epilog="Example: scheduler jobs show -g my-rg -c my-jobs -n ping")
@guarded
def show(ctx: typer.Context, group: str = Group, collection: str = Collection, name: str = Name) -> None:
    """One job: its definition (secrets are never returned) and status."""
    job = options(ctx).client().call("GET", _path(ctx, group, collection, name))
    if options(ctx).json:
        emit_json(job)
        return
    p = job.get("properties") or {}
    s = p.get("status") or {}
    zone = options(ctx).zone(job)
    action = p.get("action") or {}
    target = (action.get("request") or {}).get("uri") or (action.get("queueMessage") or {}).get("queueName") or ""
    emit_fields(
        f"Job {name}",
        [
            ("id", job.get("id")),
            ("state", p.get("state")),
            ("schedule", words(p)),
            ("start time", labelled(p.get("startTime"), zone)),
            ("action", f"{action.get('type', '?')} {target}".strip()),
            ("overlap policy", p.get("overlapPolicy") or "Allow"),
            ("spread window", p.get("spreadWindow") or "-"),
            ("expect success within", p.get("expectSuccessWithin") or "- (no expectation)"),
            ("missed-run policy", missed_run_words(p)),
            ("async completion", async_words(action)),
            *_occurrence_control(p, zone),
            ("next run", labelled(s.get("nextExecutionTime"), zone)),
            ("last run", labelled(s.get("lastExecutionTime"), zone)),
            (
                "attempts / failed / faulted occurrences",
                f"{s.get('executionCount', 0)} / {s.get('failureCount', 0)} / {s.get('faultedCount', 0)}",
            ),
        ],
    )


def _occurrence_control(p: dict[str, Any], zone: str | None) -> list[tuple[str, Any]]:
    """The pause (in force, or ended: a pause past its `until` is kept as written) and how many exceptions."""
    pause = p.get("pause") or {}
    until = instant(pause.get("until"))
    if until is None:
        paused = "-"
    else:
        note = f" ({pause['note']})" if pause.get("note") else ""
        ahead = until > datetime.now(UTC)
        paused = f"{'until' if ahead else 'ended'} {labelled(until, zone)}{note}"
    policy = (p.get("recurrence") or {}).get("dstPolicy") or {}
    dst = (
        [("DST policy", f"gap {policy.get('gap') or 'Shift'}, fold {policy.get('fold') or 'First'}")] if policy else []
    )
    count = len(p.get("exceptions") or [])
    return [*dst, ("paused", paused), ("exceptions", f"{count} (`jobs exceptions` lists them)" if count else "0")]


def _set_state(ctx: typer.Context, group: str, collection: str, name: str, state: str) -> None:
    job = options(ctx).client().call("PATCH", _path(ctx, group, collection, name), {"properties": {"state": state}})
    _saved(ctx, job, state.lower())


@app.command("enable", epilog="Example: scheduler jobs enable -g my-rg -c my-jobs -n ping")
@guarded
def enable(ctx: typer.Context, group: str = Group, collection: str = Collection, name: str = Name) -> None:
    """Enable the job."""
    _set_state(ctx, group, collection, name, "Enabled")


@app.command("disable", epilog="Example: scheduler jobs disable -g my-rg -c my-jobs -n ping")
@guarded
def disable(ctx: typer.Context, group: str = Group, collection: str = Collection, name: str = Name) -> None:
    """Disable the job."""
    _set_state(ctx, group, collection, name, "Disabled")


def _latest(ctx: typer.Context, path: str) -> dict[str, Any] | None:
    page = options(ctx).client().call("GET", f"{path}/history", query={"$top": 1}) or {}
    return next(iter(page.get("value") or []), None)


@app.command("run", epilog="Example: scheduler jobs run -g my-rg -c my-jobs -n ping --wait")
@guarded
def run(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    wait: bool = typer.Option(
        False,
        "--wait",
        help="Wait (up to a minute) for the run's history entry and show it; exit code 1 when it failed.",
    ),
    overlap: str | None = RunOverlapOption,
) -> None:
    """Run the job now, once, outside its schedule."""
    path = _path(ctx, group, collection, name)
    before = _latest(ctx, path) if wait else None
    options(ctx).client().call("POST", f"{path}/run", query={"overlapPolicy": overlap} if overlap else None)
    if not wait:
        emit_json({"job": name, "action": "run"}) if options(ctx).json else emit_message(f"Job {name}: run requested.")
        return
    deadline = time.monotonic() + 60
    entry = None
    while time.monotonic() < deadline:
        time.sleep(0.5)
        entry = _latest(ctx, path)
        if entry and (before is None or entry.get("name") != before.get("name")):
            break
        entry = None
    if entry is None:
        raise CliError(
            "NoHistoryYet",
            f"job {name} was asked to run, and no history entry came within a minute: "
            f"see `scheduler jobs history -g {group} -c {collection} -n {name}`",
        )
    p = entry.get("properties") or {}
    if options(ctx).json:
        emit_json(entry)
    else:
        emit_message(
            f"Job {name} ran: {p.get('status')} ({p.get('actionName')}, attempt "
            f"{int(p.get('retryCount') or 0) + 1}, started {_lateness(p)} after its expected time)"
        )
        emit_message(_message(p.get("message")))
    if str(p.get("status", "")).lower() == "failed":
        raise typer.Exit(1)


@app.command("delete", epilog="Example: scheduler jobs delete -g my-rg -c my-jobs -n ping --yes")
@guarded
def delete(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete the job and its history."""
    if not yes:
        typer.confirm(f"Delete job {name}?", abort=True)
    options(ctx).client().call("DELETE", _path(ctx, group, collection, name))
    emit_json({"job": name, "action": "delete"}) if options(ctx).json else emit_message(f"Job {name} deleted.")


def _lateness(p: dict[str, Any]) -> str:
    try:
        started = datetime.fromisoformat(p["startTime"].replace("Z", "+00:00"))
        expected = datetime.fromisoformat(p["expectedExecutionTime"].replace("Z", "+00:00"))
    except (KeyError, AttributeError, ValueError):
        return "-"
    return f"{(started - expected).total_seconds():.1f}s"


MESSAGE_CHARS = 300  # of a history message in the table: an Http action's message holds the whole response


def _message(text: str | None) -> str:
    """The message on one line; a long one cut with a pointer to where it is whole."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= MESSAGE_CHARS else f"{flat[:MESSAGE_CHARS].rstrip()}... (-o json for all)"
