"""`scheduler jobs create|update`: a job from flags (job_flags.py), a JSON file, or both (each flag sets its
members over the file's), with the newer api-version's options (concurrency.py); `put_body`/`patch_body` build
their bodies (`jobs what-if` sends the same). `create` refuses a name already
taken unless `--replace`: a replace (PUT) resets what the command does not set. `update` is a PATCH (absent members
are kept, secrets included); its flags are applied over the stored job (its frequency, its time zone, the members
they remove). `register(app)` adds them to the `jobs` group (main.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from .client import USAGE_ERROR, CliError
from .concurrency import (
    ExpectOption,
    MissedRunOption,
    OverlapOption,
    ReplaceOption,
    SpreadOption,
    job_members,
)
from .context import guarded, options
from .job_flags import JobFlags, apply_flags, job_flag_options, require_target
from .jobs import Collection, Group, Name, _definition, _path, _saved
from .output import warn
from .times import legacy_zone_warnings


@guarded
@job_flag_options()
def create(
    ctx: typer.Context,
    flags: JobFlags,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    file: Path = typer.Option(None, "--file", "-f", help="JSON file (`-` for standard input); the flags win."),
    overlap: str | None = OverlapOption,
    spread: str | None = SpreadOption,
    expect: str | None = ExpectOption,
    missed: str | None = MissedRunOption,
    replace: bool = ReplaceOption,
) -> None:
    """Create a job (PUT) from flags (--uri, --every, --at, --on...), or from a JobDefinition (or its properties) in
    JSON, or both: each flag sets its members over the file's. An existing job only with --replace (`update`
    changes some of its properties)."""
    body = put_body(ctx, flags, file, overlap, spread, expect, missed)
    client, path = options(ctx).client(), _path(ctx, group, collection, name)
    existed = client.exists(path)
    if existed and not replace:
        raise CliError(
            "Conflict",
            f"job '{name}' already exists in job collection '{collection}': `scheduler jobs update` changes some "
            f"of its properties (PATCH); `create --replace` replaces it (what the file leaves out goes back to its "
            f"default)",
        )
    _saved(ctx, client.call("PUT", path, body), "replaced" if existed else "created")


@guarded
@job_flag_options()
def update(
    ctx: typer.Context,
    flags: JobFlags,
    group: str = Group,
    collection: str = Collection,
    name: str = Name,
    file: Path = typer.Option(None, "--file", "-f", help="JSON file (`-` for standard input)."),
    overlap: str | None = OverlapOption,
    spread: str | None = SpreadOption,
    expect: str | None = ExpectOption,
    missed: str | None = MissedRunOption,
) -> None:
    """Change some properties of a job from JSON and the options (PATCH: absent members are kept, secrets
    included); each flag sets its members over the file's."""
    path = _path(ctx, group, collection, name)
    body = patch_body(ctx, path, flags, file, overlap, spread, expect, missed)
    _saved(ctx, options(ctx).client().call("PATCH", path, body), "updated")


def put_body(
    ctx: typer.Context,
    flags: JobFlags,
    file: Path | None,
    overlap: str | None,
    spread: str | None,
    expect: str | None,
    missed: str | None,
) -> dict[str, Any]:
    """A create's (PUT's) body: the file's job, the flags and the options over it; a warning for a legacy zone."""
    require_target(file is not None, flags)
    body = _definition(ctx, file) if file is not None else {"properties": {}}
    apply_flags(body["properties"], flags)
    job_members(body["properties"], overlap, spread, expect, missed)
    warn(legacy_zone_warnings(body["properties"]))
    return body


def patch_body(
    ctx: typer.Context,
    path: str,
    flags: JobFlags,
    file: Path | None,
    overlap: str | None,
    spread: str | None,
    expect: str | None,
    missed: str | None,
) -> dict[str, Any]:
    """An update's (PATCH's) body: the flags are applied over the stored job (its frequency, zone and the members
    they remove)."""
    if file is None and not flags.given() and overlap is None and spread is None and expect is None and missed is None:
        raise CliError(
            "NothingToChange",
            "pass --file, a flag of the target, schedule or retry (--uri, --every, --retry...), --overlap-policy, "
            "--spread-window, --expect-success-within or --missed-run-policy",
            USAGE_ERROR,
        )
    body = _definition(ctx, file) if file is not None else {"properties": {}}
    if flags.given():
        stored = (options(ctx).client().call("GET", path) or {}).get("properties") or {}
        apply_flags(body["properties"], flags, stored)
    job_members(body["properties"], overlap, spread, expect, missed)
    warn(legacy_zone_warnings(body["properties"]))
    return body


_EXAMPLES = {
    "create": "scheduler jobs create -g my-rg -c my-jobs -n ping --uri http://127.0.0.1:8080/ping --on Mon,Fri "
    "--at 09:00 --time-zone Europe/London",
    "update": "scheduler jobs update -g my-rg -c my-jobs -n ping --overlap-policy Skip -f patch.json",
}


def register(app: typer.Typer) -> None:
    for function, name in ((create, "create"), (update, "update")):
        app.command(name, epilog=f"Example: {_EXAMPLES[name]}")(function)
