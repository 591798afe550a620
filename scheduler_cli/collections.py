"""`scheduler collections list|show|create|update|enable|disable|delete`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError

from shared.console.checks import collection_limits
from shared.model import JobCollectionDefinition
from shared.wire_members import unknown_members

from .client import USAGE_ERROR, CliError, collection_path
from .concurrency import (
    AutoSpreadOption,
    MaxConcurrentOption,
    NoAutoSpreadOption,
    NoRateLimitsOption,
    RateLimitOption,
    ReplaceOption,
    auto_spread_words,
    collection_members,
    limits_words,
)
from .context import guarded, options, read_json
from .output import emit_fields, emit_json, emit_message, emit_table, warn

app = typer.Typer(help="Job collections.", no_args_is_help=True)
STATES = ("enabled", "disabled", "faulted", "completed")

Group = typer.Option(..., "--resource-group", "-g", help="Resource group.")
Collection = typer.Option(..., "--collection", "-c", "--name", "-n", help="Job collection name.")


def group_of(resource_id: str) -> str:
    found = re.search(r"/resourceGroups/([^/]+)/", resource_id or "", re.IGNORECASE)
    return found.group(1) if found else ""


def plan_limits(document: dict[str, Any]) -> dict[str, Any] | None:
    """What the API enforces on the collection (its plan's limits tightened by its quota, and the history it
    keeps): the console's rule and words (shared/console/checks.py); None when the document is not one."""
    try:
        definition = JobCollectionDefinition.model_validate({"properties": document.get("properties") or {}})
    except ValidationError:
        return None
    return collection_limits(definition)


@app.command("list", epilog="Example: scheduler collections list -g my-rg")
@guarded
def list_collections(
    ctx: typer.Context, group: str = typer.Option(None, "--resource-group", "-g", help="Only this resource group.")
) -> None:
    """Collections of the subscription (or of one resource group)."""
    opts = options(ctx)
    sub = opts.require_subscription()
    base = f"/subscriptions/{sub}" + (f"/resourceGroups/{group}" if group else "")
    items = opts.client().list_all(f"{base}/providers/Microsoft.Scheduler/jobCollections")
    if opts.json:
        emit_json(items)
        return
    rows = []
    for c in items:
        found = plan_limits(c) or {}
        rows.append(
            (
                c.get("name"),
                group_of(c.get("id", "")),
                c.get("location"),
                (c.get("properties") or {}).get("state"),
                ((c.get("properties") or {}).get("sku") or {}).get("name"),
                found.get("maxJobs", "?"),
                found.get("minInterval", "?"),
            )
        )
    emit_table(
        f"Job collections of {sub}",
        ["Name", "Resource group", "Location", "State", "SKU", "Max jobs", "Runs at most every"],
        rows,
    )


@app.command("show", epilog="Example: scheduler collections show -g my-rg -c my-jobs")
@guarded
def show(ctx: typer.Context, group: str = Group, collection: str = Collection) -> None:
    """One collection: its jobs counted by state, and what its plan allows (jobs, how often, history kept)."""
    opts = options(ctx)
    client = opts.client()
    path = collection_path(opts.require_subscription(), group, collection)
    found = client.call("GET", path)
    jobs = client.list_all(f"{path}/jobs")
    counts = {state: 0 for state in STATES}
    for job in jobs:
        state = str((job.get("properties") or {}).get("state", "")).lower()
        counts[state] = counts.get(state, 0) + 1
    limits = plan_limits(found)
    if opts.json:
        emit_json({**found, "jobCounts": {"total": len(jobs), **counts}, "limits": limits})
        return
    properties = found.get("properties") or {}
    words = (limits or {}).get("words") or {}
    emit_fields(
        f"Job collection {collection}",
        [
            ("id", found.get("id")),
            ("location", found.get("location")),
            ("state", properties.get("state")),
            ("sku", (properties.get("sku") or {}).get("name") or "Standard"),
            ("jobs used / max", f"{len(jobs)} of at most {words.get('jobs', '?')}"),
            ("each job runs", words.get("recurrence", "?")),
            ("outbound authentication", words.get("auth", "?")),
            ("history kept", words.get("retention", "?")),
            ("max concurrent executions", limits_words(properties)[0]),
            ("target rate limits", limits_words(properties)[1]),
            ("auto spread", auto_spread_words(properties)),
            *((f"{state} jobs", count) for state, count in counts.items()),
            ("tags", ", ".join(f"{k}={v}" for k, v in (found.get("tags") or {}).items()) or "-"),
        ],
    )


@app.command("create", epilog="Example: scheduler collections create -g my-rg -c my-jobs -l westeurope --sku Standard")
@guarded
def create(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    location: str = typer.Option(None, "--location", "-l", help="Azure region name."),
    sku: str = typer.Option(None, "--sku", help="Free, Standard, P10Premium or P20Premium."),
    max_jobs: int = typer.Option(None, "--max-jobs", min=1, help="quota.maxJobCount."),
    file: Path = typer.Option(None, "--file", "-f", help="A JobCollectionDefinition JSON (flags win)."),
    max_concurrent: int | None = MaxConcurrentOption,
    rate_limit: list[str] | None = RateLimitOption,
    auto_spread: str | None = AutoSpreadOption,
    replace: bool = ReplaceOption,
) -> None:
    """Create a collection (PUT); an existing one only with --replace (`update` changes its limits)."""
    opts = options(ctx)
    body: dict[str, Any] = read_json(file) if file else {}
    if not isinstance(body, dict):
        raise CliError("InvalidJson", f"{file}: a JSON object is required", USAGE_ERROR)
    if file:
        warn([u.message() for u in unknown_members(body, opts.client().schemas(), "JobCollectionDefinition")])
    properties = body.setdefault("properties", {})
    if location:
        body["location"] = location
    if sku:
        properties["sku"] = {"name": sku}
    if max_jobs:
        properties.setdefault("quota", {})["maxJobCount"] = max_jobs
    collection_members(properties, max_concurrent, rate_limit, False, auto_spread)
    if not body.get("location"):
        raise CliError("MissingLocation", "pass --location (or a location in --file)", USAGE_ERROR)
    properties.setdefault("sku", {"name": "Standard"})
    client = opts.client()
    path = collection_path(opts.require_subscription(), group, collection)
    existed = client.exists(path)
    if existed and not replace:
        raise CliError(
            "Conflict",
            f"job collection '{collection}' already exists in resource group '{group}': `scheduler collections "
            f"update` changes its limits; `create --replace` replaces it (what this command does not set goes back "
            f"to its default)",
        )
    saved = client.call("PUT", path, body)
    verb = "replaced" if existed else "created"
    emit_json(saved) if opts.json else emit_message(f"Job collection {collection} {verb} ({saved.get('id')}).")


@app.command(
    "update",
    epilog="Example: scheduler collections update -g my-rg -c my-jobs --max-concurrent 10 --rate-limit api.x.com=50",
)
@guarded
def update(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    max_concurrent: int | None = MaxConcurrentOption,
    rate_limit: list[str] | None = RateLimitOption,
    no_rate_limits: bool = NoRateLimitsOption,
    auto_spread: str | None = AutoSpreadOption,
    no_auto_spread: bool = NoAutoSpreadOption,
) -> None:
    """Change a collection's limits (PATCH: everything else is kept)."""
    properties = collection_members({}, max_concurrent, rate_limit, no_rate_limits, auto_spread, no_auto_spread)
    if not properties:
        raise CliError(
            "NothingToChange",
            "pass --max-concurrent, --rate-limit, --no-rate-limits, --auto-spread or --no-auto-spread",
            USAGE_ERROR,
        )
    opts = options(ctx)
    saved = opts.client().call(
        "PATCH", collection_path(opts.require_subscription(), group, collection), {"properties": properties}
    )
    if opts.json:
        emit_json(saved)
        return
    saved_properties = saved.get("properties") or {}
    most, rates = limits_words(saved_properties)
    emit_message(
        f"Job collection {collection} updated: max concurrent executions {most}; rate limits {rates}; "
        f"auto spread {auto_spread_words(saved_properties)}."
    )


def _post(ctx: typer.Context, group: str, collection: str, verb: str) -> None:
    opts = options(ctx)
    opts.client().call("POST", f"{collection_path(opts.require_subscription(), group, collection)}/{verb}")
    emit_json({"collection": collection, "action": verb}) if opts.json else emit_message(
        f"Job collection {collection}: {verb}d."
    )


@app.command("enable", epilog="Example: scheduler collections enable -g my-rg -c my-jobs")
@guarded
def enable(ctx: typer.Context, group: str = Group, collection: str = Collection) -> None:
    """Enable the collection and its jobs."""
    _post(ctx, group, collection, "enable")


@app.command("disable", epilog="Example: scheduler collections disable -g my-rg -c my-jobs")
@guarded
def disable(ctx: typer.Context, group: str = Group, collection: str = Collection) -> None:
    """Disable the collection and its jobs."""
    _post(ctx, group, collection, "disable")


@app.command("delete", epilog="Example: scheduler collections delete -g my-rg -c my-jobs --yes")
@guarded
def delete(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete the collection and every job in it."""
    opts = options(ctx)
    if not yes:
        typer.confirm(f"Delete job collection {collection} and all its jobs?", abort=True)
    opts.client().call("DELETE", collection_path(opts.require_subscription(), group, collection))
    emit_json({"collection": collection, "action": "delete"}) if opts.json else emit_message(
        f"Job collection {collection} deleted."
    )
