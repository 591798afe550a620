"""What an import will meet, checked before anything is written, so `--what-if` does not promise what the
import cannot do.

Contract: `preflight(client, subscription, items, now)` answers, for each planned resource (by index) that
will fail, why: a job whose collection neither exists nor is created by the same import; a job the API will
refuse on its own (validation, with the property path); a job that recurs more often than its collection's
plan and quota allow, or authenticates on a Free plan; creates beyond the collection's effective
`maxJobCount` (the plan's limit, tightened by the quota) counting the jobs it already holds. The rules are
the scheduler's own (shared/lifecycle/quotas.py and validation.py, the CLI's copy of them); the API stays
the authority, and the import still sends what preflight does not flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from shared.model import JobCollectionDefinition, JobDefinition

from .client import ApiClient, CliError, collection_path
from .template import Planned


@dataclass
class Step:
    item: Planned
    current: dict[str, Any] | None  # what the API holds now (None: absent)
    verdict: str  # create | change | unchanged


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".")
    return f"{path}: {first['msg']}"


def preflight(client: ApiClient, subscription: str, steps: list[Step], now: datetime) -> dict[int, str]:
    from shared.lifecycle.errors import LifecycleError
    from shared.lifecycle.quotas import check_job, limits_of
    from shared.lifecycle.validation import validate_job

    failing: dict[int, str] = {}
    collections: dict[tuple[str, str], JobCollectionDefinition | None] = {}
    held: dict[tuple[str, str], int] = {}  # jobs the collection will hold
    missing: set[tuple[str, str]] = set()
    for index, step in enumerate(steps):
        if step.item.kind != "collection":
            continue
        key = (step.item.group.lower(), step.item.collection.lower())
        try:
            collections[key] = JobCollectionDefinition.model_validate(step.item.body)
        except ValidationError as error:
            failing[index] = f"the API will refuse it: {_first_error(error)}"
            collections[key] = None
        held[key] = len(client.list_all(f"{_path(subscription, step.item)}/jobs")) if step.current else 0

    for index, step in enumerate(steps):
        item = step.item
        if item.kind != "job" or step.verdict == "unchanged":
            continue
        key = (item.group.lower(), item.collection.lower())
        if key not in collections and key not in missing:
            try:
                found = client.call("GET", _path(subscription, item))
                collections[key] = JobCollectionDefinition.model_validate(found)
                held[key] = len(client.list_all(f"{_path(subscription, item)}/jobs"))
            except CliError as error:
                if error.status != 404:
                    failing[index] = f"its job collection could not be read: {error.line()}"
                    continue
                missing.add(key)
        if key in missing:
            failing[index] = (
                f"job collection '{item.collection}' does not exist in resource group '{item.group}' "
                f"(subscription '{subscription}'), and this import does not create it"
            )
            continue
        try:
            properties = JobDefinition.model_validate(item.body).properties
        except ValidationError as error:
            failing[index] = f"the API will refuse it: {_first_error(error)}"
            continue
        if properties is None or properties.action is None:
            failing[index] = "the API will refuse it: properties.action is required"
            continue
        definition = collections.get(key)
        try:
            series = validate_job(properties, now)
            if definition is not None:
                check_job(limits_of(definition), properties, series, item.job or "")
        except LifecycleError as error:
            failing[index] = f"the API will refuse it: {error.message}"
            continue
        if step.verdict == "create" and definition is not None:
            limits = limits_of(definition)
            if held[key] >= limits.max_jobs:
                failing[index] = (
                    f"QuotaExceeded: job collection '{item.collection}' would hold more than its "
                    f"{limits.max_jobs} jobs (maxJobCount on the {limits.sku.value} plan)"
                )
                continue
            held[key] += 1
    return failing


def _path(subscription: str, item: Planned) -> str:
    return collection_path(subscription, item.group, item.collection)
