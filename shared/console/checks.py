"""The console's two stateless helpers beside the schedule: members the API would ignore, and a collection's
effective limits. Like `schedule`, they read nothing stored, so they need no credentials and leak nothing.

Contract:
- `members(body)`: `{"kind": "job" | "collection", "document": {...}}` answers `{"value": [{"path", "owner",
  "suggestion", "message"}]}`, every member of the document the API's OpenAPI schema does not declare
  in the api-version the console speaks (the newest; shared/wire_members.py): the API ignores them, and
  the console's editor shows them as warnings. 400 for a body that is not such an object.
- `limits(body)`: `{"collections": [definition, ...]}` (at most 200) answers `{"value": [{"sku", "maxJobs",
  "planMaxJobs", "minInterval", "minIntervalSeconds", "outboundAuthentication", "retention", "words"}]}` per
  collection: what the API enforces (the plan's limits tightened by the collection's quota,
  shared/lifecycle/quotas.py; the history it keeps, shared/retention.py), or `{"error": {...}}` for a definition
  the API would not accept. `words` (`jobs`, `recurrence`, `auth`, `retention`) says them as the console and
  `scheduler collections show` both print them (`collection_limits`, one rule for both).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ..model import JobCollectionDefinition, format_duration
from ..model.extensions import DEFAULT_RETENTION
from ..model.versions import NEWEST
from ..wire_members import unknown_members

ROOTS = {"job": "JobDefinition", "collection": "JobCollectionDefinition"}
_MAX_COLLECTIONS = 200


def _read(body: bytes) -> Any:
    try:
        return json.loads(body or b"{}")
    except ValueError:
        return None


def members(body: bytes) -> tuple[int, dict[str, Any]]:
    from ..api.openapi import openapi_document  # the document the API serves: one source with its validation
    from ..api.operations import OPENAPI_ROUTES

    document = _read(body)
    kind = document.get("kind") if isinstance(document, dict) else None
    if kind not in ROOTS or not isinstance(document.get("document"), dict):
        return 400, {
            "error": {
                "code": "BadRequest",
                "message": 'kind ("job" or "collection") and document (an object) are required.',
            }
        }
    route = next(name for name, version in OPENAPI_ROUTES.items() if version == NEWEST.name)  # the console's
    schemas = openapi_document(f"/api/{route}")["components"]["schemas"]
    return 200, {"value": [u.to_json() for u in unknown_members(document["document"], schemas, ROOTS[kind])]}


def _words(seconds: int) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} seconds"


def _retention(definition: JobCollectionDefinition) -> dict[str, Any]:
    kept = (definition.properties.history_retention if definition.properties else None) or DEFAULT_RETENTION
    entries, age = kept.effective_max_entries, int(kept.effective_max_age.total_seconds())
    failed = int(kept.effective_failure_max_age.total_seconds())
    words = f"the newest {entries} entries per job, none older than {_words(age)}"
    return {
        "maxEntriesPerJob": entries,
        "maxAge": format_duration(kept.effective_max_age),
        "failureMaxAge": format_duration(kept.effective_failure_max_age),
        "words": words + (f" (failed ones: {_words(failed)})" if failed != age else ""),
    }


def collection_limits(definition: JobCollectionDefinition) -> dict[str, Any]:
    """What the API enforces on the collection, in numbers and in words."""
    from ..lifecycle.quotas import SKU_LIMITS, limits_of, sku_of

    effective = limits_of(definition)
    seconds = int(effective.min_gap.total_seconds())
    plan_max = SKU_LIMITS[sku_of(definition)].max_jobs
    plan = f"the {effective.sku.value} plan"
    retention = _retention(definition)
    return {
        "sku": effective.sku.value,
        "maxJobs": effective.max_jobs,
        "planMaxJobs": plan_max,
        "minInterval": _words(seconds),
        "minIntervalSeconds": seconds,
        "outboundAuthentication": effective.outbound_auth,
        "retention": {k: v for k, v in retention.items() if k != "words"},
        "words": {
            "jobs": f"{effective.max_jobs} (maxJobCount; {plan} allows {plan_max})"
            if effective.max_jobs < plan_max
            else f"{effective.max_jobs} ({plan})",
            "recurrence": f"at most once every {_words(seconds)}",
            "auth": "allowed" if effective.outbound_auth else f"not allowed on {plan}",
            "retention": retention["words"],
        },
    }


def limits(body: bytes) -> tuple[int, dict[str, Any]]:
    document = _read(body)
    collections = document.get("collections") if isinstance(document, dict) else None
    if not isinstance(collections, list) or len(collections) > _MAX_COLLECTIONS:
        return 400, {
            "error": {
                "code": "BadRequest",
                "message": f"collections: a list of at most {_MAX_COLLECTIONS} objects is required.",
            }
        }
    answers: list[dict[str, Any]] = []
    for index, collection in enumerate(collections):
        try:
            definition = JobCollectionDefinition.model_validate(collection)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            message = f"collections[{index}].{where}: {first['msg']}"
            answers.append({"error": {"code": "BadRequest", "message": message}})
            continue
        answers.append(collection_limits(definition))
    return 200, {"value": answers}
