"""`scheduler export`: a collection and its jobs as the resource list `scheduler import` takes back.

Contract: prints (or writes to `--file`) `{"value": [collection, job, ...]}`, each resource as the API
returns it (ids, names, types; jobs keep their read-only `status`, which import drops), so
`scheduler import export.json [-g other-group]` recreates them, here or elsewhere. The API never returns a
write-only secret, so none is exported: every job whose action needs one is named on stderr with the
properties to set again (`scheduler jobs update`, or an edit of the file before importing).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from .client import collection_path
from .context import options
from .output import emit_json, emit_message, warn

# What the API requires for each HTTP authentication type, and the Service Bus key: never returned.
_REQUIRED = {"basic": ("password",), "clientcertificate": ("pfx", "password"), "activedirectoryoauth": ("secret",)}


def _missing_secrets(action: Any, where: str) -> list[str]:
    if not isinstance(action, dict):
        return []
    found: list[str] = []
    auth = (action.get("request") or {}).get("authentication") or {}
    for name in _REQUIRED.get(str(auth.get("type", "")).lower(), ()):
        found.append(f"{where}.request.authentication.{name}")
    for kind in ("serviceBusQueueMessage", "serviceBusTopicMessage"):
        if isinstance(action.get(kind), dict) and action[kind].get("authentication"):
            found.append(f"{where}.{kind}.authentication.sasKey")
    if isinstance(action.get("queueMessage"), dict):
        found.append(f"{where}.queueMessage.sasToken (if it had one)")
    return found + _missing_secrets(action.get("errorAction"), f"{where}.errorAction")


def export(ctx: typer.Context, group: str, collection: str, file: Path | None) -> None:
    opts = options(ctx)
    client = opts.client()
    path = collection_path(opts.require_subscription(), group, collection)
    found = client.call("GET", path)
    jobs = client.list_all(f"{path}/jobs")
    document = {"value": [found, *jobs]}
    for job in jobs:
        secrets = _missing_secrets((job.get("properties") or {}).get("action"), "properties.action")
        if secrets:
            name = str(job.get("name", "")).rsplit("/", 1)[-1]
            warn(
                [f"job {name}: write-only secrets are not exported ({', '.join(secrets)}); set them again after import"]
            )
    if file is None:
        emit_json(document)
        return
    file.write_text(json.dumps(document, indent=2) + "\n", "utf-8")
    emit_message(
        f"Exported job collection {collection} and {len(jobs)} job{'s' if len(jobs) != 1 else ''} to "
        f"{file}; import it with: scheduler import {file} [-g GROUP]"
    )
