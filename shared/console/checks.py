"""The console's two stateless helpers beside the schedule: members the API would ignore, and a collection's
effective limits. Like `schedule`, they read nothing stored, so they need no credentials and leak nothing.

Contract:
- `members(body)`: `{"kind": "job" | "collection", "document": {...}}` answers `{"value": [{"path", "owner",
  "suggestion", "message"}]}`, every member of the document the API's OpenAPI schema does not declare
  in the api-version the console speaks (the newest; shared/wire_members.py): the API ignores them, and
  the console's editor shows them as warnings. 400 for a body that is not such an object.
- `limits(body)`: `{"collections": [definition, ...]}` (at most 200) answers `{"value": [{"sku", "maxJobs",
  "planMaxJobs", "minInterval", "minIntervalSeconds", "outboundAuthentication"}]}` per collection: what the
  API enforces (the plan's limits tightened by the collection's quota, shared/lifecycle/quotas.py), or
  `{"error": {...}}` for a definition the API would not accept.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ..model import JobCollectionDefinition
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


def limits(body: bytes) -> tuple[int, dict[str, Any]]:
    from ..lifecycle.quotas import SKU_LIMITS, limits_of, sku_of

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
        effective = limits_of(definition)
        seconds = int(effective.min_gap.total_seconds())
        answers.append(
            {
                "sku": effective.sku.value,
                "maxJobs": effective.max_jobs,
                "planMaxJobs": SKU_LIMITS[sku_of(definition)].max_jobs,
                "minInterval": _words(seconds),
                "minIntervalSeconds": seconds,
                "outboundAuthentication": effective.outbound_auth,
            }
        )
    return 200, {"value": answers}
