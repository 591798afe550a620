"""`scheduler collections list|show|create|update|enable|disable|delete`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer

from shared.wire_members import unknown_members

from .client import USAGE_ERROR, CliError, collection_path
from .concurrency import MaxConcurrentOption, NoRateLimitsOption, RateLimitOption, collection_members, limits_words
from .context import guarded, options, read_json
from .output import emit_fields, emit_json, emit_message, emit_table, warn

app = typer.Typer(help="Job collections.", no_args_is_help=True)
STATES = ("enabled", "disabled", "faulted", "completed")

Group = typer.Option(..., "--resource-group", "-g", help="Resource group.")
Collection = typer.Option(..., "--collection", "-c", "--name", "-n", help="Job collection name.")


def group_of(resource_id: str) -> str:
    found = re.search(r"/resourceGroups/([^/]+)/", resource_id or "", re.IGNORECASE)
    return found.group(1) if found else ""


def _quota(properties: dict[str, Any]) -> str:
    quota = properties.get("quota") or {}
    recurrence = quota.get("maxRecurrence") or {}
    parts = [
        f"{quota['maxJobCount']} jobs" if quota.get("maxJobCount") else "",
        f"every {recurrence.get('interval')} {recurrence.get('frequency')}" if recurrence else "",
    ]
    return ", ".join(p for p in parts if p) or "-"


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
    emit_table(
        f"Job collections of {sub}",
        ["Name", "Resource group", "Location", "State", "SKU", "Quota"],
        [
            (
                c.get("name"),
                group_of(c.get("id", "")),
                c.get("location"),
                (c.get("properties") or {}).get("state"),
                ((c.get("properties") or {}).get("sku") or {}).get("name"),
                _quota(c.get("properties") or {}),
            )
            for c in items
        ],
    )


@app.command("show", epilog="Example: scheduler collections show -g my-rg -c my-jobs")
@guarded
def show(ctx: typer.Context, group: str = Group, collection: str = Collection) -> None:
    """One collection, with its jobs counted by state."""
    opts = options(ctx)
    client = opts.client()
    path = collection_path(opts.require_subscription(), group, collection)
    found = client.call("GET", path)
    jobs = client.list_all(f"{path}/jobs")
    counts = {state: 0 for state in STATES}
    for job in jobs:
        state = str((job.get("properties") or {}).get("state", "")).lower()
        counts[state] = counts.get(state, 0) + 1
    if opts.json:
        emit_json({**found, "jobCounts": {"total": len(jobs), **counts}})
        return
    properties = found.get("properties") or {}
    quota = properties.get("quota") or {}
    emit_fields(
        f"Job collection {collection}",
        [
            ("id", found.get("id")),
            ("location", found.get("location")),
            ("state", properties.get("state")),
            ("sku", (properties.get("sku") or {}).get("name")),
            ("quota", _quota(properties)),
            ("jobs used / max", f"{len(jobs)} / {quota.get('maxJobCount', 'no limit')}"),
            ("max concurrent executions", limits_words(properties)[0]),
            ("target rate limits", limits_words(properties)[1]),
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
) -> None:
    """Create or replace a collection (PUT)."""
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
    collection_members(properties, max_concurrent, rate_limit, False)
    if not body.get("location"):
        raise CliError("MissingLocation", "pass --location (or a location in --file)", USAGE_ERROR)
    properties.setdefault("sku", {"name": "Standard"})
    saved = opts.client().call("PUT", collection_path(opts.require_subscription(), group, collection), body)
    emit_json(saved) if opts.json else emit_message(f"Job collection {collection} saved ({saved.get('id')}).")


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
) -> None:
    """Change a collection's limits (PATCH: everything else is kept)."""
    properties = collection_members({}, max_concurrent, rate_limit, no_rate_limits)
    if not properties:
        raise CliError("NothingToChange", "pass --max-concurrent, --rate-limit or --no-rate-limits", USAGE_ERROR)
    opts = options(ctx)
    saved = opts.client().call(
        "PATCH", collection_path(opts.require_subscription(), group, collection), {"properties": properties}
    )
    if opts.json:
        emit_json(saved)
        return
    most, rates = limits_words(saved.get("properties") or {})
    emit_message(f"Job collection {collection} updated: max concurrent executions {most}; rate limits {rates}.")


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
