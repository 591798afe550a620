"""The `scheduler` command: global options, the command groups, `next` (offline) and `import`.

Environment: SCHEDULER_ENDPOINT (default http://127.0.0.1:7071/api), SCHEDULER_SUBSCRIPTION, SCHEDULER_TOKEN
(a bearer token sent as Authorization), SCHEDULER_FUNCTIONS_KEY (sent as x-functions-key). Flags win.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from shared.console.schedule import ScheduleError, describe, upcoming

from . import (
    collections,
    dead_letters,
    destinations,
    doctor,
    forecast,
    history,
    job_writes,
    jobs,
    local,
    occurrence_control,
    occurrences,
    why,
)
from .client import DEFAULT_ENDPOINT, USAGE_ERROR, CliError
from .context import TIME_FORMATS, OneLineErrors, Options, Output, guarded, options, read_json
from .export import export
from .importer import import_resources
from .job_flags import SCHEDULE, JobFlags, apply_flags, job_flag_options
from .output import emit_json, emit_message, emit_table, warn
from .template import Ask
from .times import labelled, legacy_zone_warnings, times_in_option

app = typer.Typer(
    name="scheduler",
    cls=OneLineErrors,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Drive the scheduler's management API: collections, jobs, history, import of ARM templates.",
)
forecast.register(collections.app)  # forecast: occurrences per minute and per destination (issue 40)
app.add_typer(collections.app, name="collections")
job_writes.register(jobs.app)  # create and update: from flags, a file, or both
history.register(jobs.app)  # history and ledger: each occurrence with every attempt under it
occurrences.register(jobs.app)  # occurrences, what-if, backfill (newer api-version)
occurrence_control.register(jobs.app)  # skip, move, add-run, exceptions, unexcept, pause, resume (issue 39)
why.register(jobs.app)  # why: what happened or will happen to one instant
app.add_typer(jobs.app, name="jobs")
app.add_typer(dead_letters.app, name="dead-letters")  # a collection's dead letters: list, show, replay, purge
app.command("destinations", epilog=destinations.EXAMPLE)(destinations.destinations)  # held back (issue 40)
app.command("doctor", epilog="Example: scheduler doctor --endpoint http://127.0.0.1:7071/api")(doctor.doctor)
app.add_typer(local.app, name="local")  # the local Azurite: a queue SAS for Storage-queue jobs


@app.callback()
def root(
    ctx: typer.Context,
    endpoint: str = typer.Option(
        DEFAULT_ENDPOINT, "--endpoint", envvar="SCHEDULER_ENDPOINT", help="The API's base URL."
    ),
    subscription: str = typer.Option(
        None, "--subscription", "-s", envvar="SCHEDULER_SUBSCRIPTION", help="Subscription id."
    ),
    token: str = typer.Option(
        None,
        "--token",
        envvar="SCHEDULER_TOKEN",
        show_envvar=True,
        help="Bearer token for the API (Authorization header).",
    ),
    functions_key: str = typer.Option(
        None, "--functions-key", envvar="SCHEDULER_FUNCTIONS_KEY", help="Azure Functions key (x-functions-key header)."
    ),
    output: Output = typer.Option(
        Output.table, "--output", "-o", metavar="table|json", help="table or json (also accepted after the command)."
    ),
    times_in: str = typer.Option(
        None,
        "--times-in",
        envvar="SCHEDULER_TIMES_IN",
        metavar="ZONE",
        callback=times_in_option,
        help="Show times in this IANA zone, or UTC (default: each job's own time zone, else UTC; -o json keeps "
        "the API's UTC).",
    ),
) -> None:
    ctx.obj = Options(endpoint, subscription, token, functions_key, output, times_in)


def _properties(document: Any) -> dict[str, Any]:
    """A job definition, its properties, or a bare recurrence, as {startTime, recurrence}."""
    if not isinstance(document, dict):
        raise CliError("InvalidJson", "a JSON object is required", USAGE_ERROR)
    if isinstance(document.get("properties"), dict):
        document = document["properties"]
    if "recurrence" in document or "startTime" in document:
        return {"startTime": document.get("startTime"), "recurrence": document.get("recurrence")}
    return {"startTime": None, "recurrence": document}


@app.command(
    "next",
    epilog="Example: scheduler next --count 3 --on Mon-Fri --at 09:00 --time-zone Europe/London "
    """(or -r '{"frequency": "Day", "schedule": {"hours": [9], "minutes": [0]}}')""",
)
@guarded
@job_flag_options(*SCHEDULE)
def next_occurrences(
    ctx: typer.Context,
    flags: JobFlags,
    file: Path = typer.Option(None, "--file", "-f", help="A job, its properties or a recurrence; the flags win."),
    recurrence: str = typer.Option(None, "--recurrence", "-r", help="The same, inline JSON."),
    after: datetime = typer.Option(None, "--after", formats=TIME_FORMATS, help="List from this instant (default now)."),
    count: int = typer.Option(10, "--count", min=1, max=100, help="How many."),
) -> None:
    """The next occurrences of a schedule (the same flags as `jobs create`, or JSON), computed offline by the
    scheduler's own engine (startTime default: now)."""
    import json

    if (file is not None and recurrence is not None) or (file is None and recurrence is None and not flags.given()):
        raise CliError(
            "MissingRecurrence", "pass the schedule flags (--every, --at, --on...), --file or --recurrence", USAGE_ERROR
        )
    try:
        document = read_json(file) if file else json.loads(recurrence) if recurrence else {"recurrence": None}
    except ValueError as error:
        raise CliError("InvalidJson", f"--recurrence: {error}", USAGE_ERROR) from None
    p = _properties(document)
    apply_flags(p, flags)
    warn(legacy_zone_warnings(p))
    now = datetime.now(UTC)
    begin = p.get("startTime") or now
    since = after.replace(tzinfo=after.tzinfo or UTC) if after else now
    try:
        words = describe(begin, p.get("recurrence"))
        found = upcoming(begin, p.get("recurrence"), since, count)
    except ScheduleError as error:
        raise CliError("BadRequest", str(error), USAGE_ERROR) from None
    instants = [t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in found]
    if options(ctx).json:
        emit_json({"description": words, "occurrences": instants})
        return
    emit_message(words)
    zone = options(ctx).zone(p)
    emit_table(None, ["#", "Occurrence"], [(i, labelled(t, zone)) for i, t in enumerate(instants, 1)])


def _asker(file: Path) -> Ask | None:
    """In a terminal, a secret the template reads from a deployed resource (listKeys) is asked for, hidden."""
    if str(file) == "-" or not sys.stdin.isatty():
        return None

    def ask(where: str, expression: str) -> str | None:
        answer = typer.prompt(
            f"{where} is {expression}; its value (hidden, empty to skip)",
            hide_input=True,
            default="",
            show_default=False,
            err=True,
        )
        return answer or None

    return ask


@app.command(
    "import", epilog="Example: scheduler import docs/examples/azuredeploy.json -g my-rg -l westeurope --what-if"
)
@guarded
def import_command(
    ctx: typer.Context,
    file: Path = typer.Argument(..., metavar="FILE", help="An ARM template, or an exported list of resources."),
    group: str = typer.Option(
        None,
        "--resource-group",
        "-g",
        metavar="GROUP",
        help="Resource group (templates; exported ids carry their own).",
    ),
    location: str = typer.Option(None, "--location", "-l", metavar="REGION", help="resourceGroup().location."),
    parameter: list[str] = typer.Option(
        None,
        "--parameter",
        "-p",
        metavar="NAME=VALUE",
        help="A template parameter, or a parameters JSON file (repeatable).",
    ),
    sets: list[str] = typer.Option(
        None,
        "--set",
        metavar="PATH=VALUE",
        help="Replace the template's value at PATH (as the problems name "
        "it; PATH:=JSON for JSON), e.g. for reference() or listKeys() "
        "(repeatable).",
    ),
    what_if: bool = typer.Option(False, "--what-if", help="Only say what would change, and what would fail."),
) -> None:
    """Apply every Microsoft.Scheduler resource of a template or export: collections first, then jobs."""
    opts = options(ctx)
    client = opts.client()
    outcome = import_resources(
        client,
        opts.require_subscription(),
        read_json(file),
        group,
        location,
        parameter or [],
        what_if,
        sets or [],
        _asker(file),
        client.schemas,
    )
    warn([w for r in outcome for w in r.warnings])
    if opts.json:
        emit_json([r.to_json() for r in outcome])
    else:
        emit_table(
            "What-if (nothing written)" if what_if else "Import",
            ["Result", "Type", "Resource", "Detail"],
            [(r.result, r.kind, r.label, r.detail) for r in outcome],
        )
    if any(r.result in ("failed", "fails") for r in outcome):
        raise typer.Exit(1)


@app.command("export", epilog="Example: scheduler export -g my-rg -c my-jobs -f my-jobs.json")
@guarded
def export_command(
    ctx: typer.Context,
    group: str = typer.Option(..., "--resource-group", "-g", metavar="GROUP", help="Resource group."),
    collection: str = typer.Option(..., "--collection", "-c", metavar="NAME", help="Job collection name."),
    file: Path = typer.Option(
        None, "--file", "-f", metavar="FILE", help="Write to this file instead of standard output."
    ),
) -> None:
    """A collection and its jobs as JSON that `scheduler import` takes back (secrets are never exported)."""
    export(ctx, group, collection, file)


def run() -> None:
    app()
