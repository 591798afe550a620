"""The newer api-version (model.PREVIEW_API_VERSION) beside 2016-03-01: which requests ask for it, and an
older version's answer without the properties only the newer version knows.

Until the api-version table (issue 26, item 1) takes them over, this is the one place that says it:
- `is_newer(request)`; `require_newer(request, what)` for what exists in the newer version only (its routes,
  `whatIf`, the ledger's `$filter` terms): a 400 naming the version otherwise;
- `older_answer(operation, request, response)`: an answer to an older api-version with the newer members
  (model/extensions.py JOB_PATHS, COLLECTION_PATHS, HISTORY_PATHS) taken out, so 2016-03-01 answers exactly as
  the old service did;
- `older_schemas(schemas)`: the OpenAPI components of the 2016-03-01 document without them (the newer
  version's own document is item 1's).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import ApiError
from ..model.extensions import COLLECTION_PATHS, HISTORY_PATHS, JOB_PATHS, PREVIEW_API_VERSION, without_newer
from .common import query_value
from .http import ApiRequest, ApiResponse


def is_newer(request: ApiRequest) -> bool:
    return query_value(request, "api-version") == PREVIEW_API_VERSION


def require_newer(request: ApiRequest, what: str) -> None:
    if not is_newer(request):
        raise ApiError(400, "MissingOrInvalidRequiredQueryParameter",
                       f"{what} needs api-version {PREVIEW_API_VERSION}.")


def _paths_of(operation: str) -> tuple[str, ...]:
    if operation == "Jobs_ListJobHistory":
        return HISTORY_PATHS
    if operation.startswith("Jobs_"):
        return JOB_PATHS
    if operation.startswith("JobCollections_"):
        return COLLECTION_PATHS
    return ()


def older_answer(operation: str, request: ApiRequest, response: ApiResponse) -> ApiResponse:
    """The response as an older api-version answers it (unchanged for the newer version, and for bodies
    without a resource)."""
    paths = _paths_of(operation)
    body = response.body
    if not paths or is_newer(request) or not isinstance(body, dict):
        return response
    if isinstance(body.get("value"), list):
        items: list[Any] = [without_newer(item, paths) if isinstance(item, dict) else item for item in body["value"]]
        return dataclasses.replace(response, body={**body, "value": items})
    return dataclasses.replace(response, body=without_newer(body, paths))


# Where each newer path's member sits in the OpenAPI components (the model that holds it), and the schemas
# only those members use.
_NEWER_MEMBERS = {
    "JobProperties": [p.rsplit(".", 1)[1] for p in JOB_PATHS],
    "JobCollectionProperties": [p.rsplit(".", 1)[1] for p in COLLECTION_PATHS],
    "JobHistoryProperties": [p.rsplit(".", 1)[1] for p in HISTORY_PATHS],
}
_NEWER_SCHEMAS = ("MissedRunPolicy", "MissedRunType", "HistoryRetention", "LedgerReason", "OccurrenceTrigger")
_NEWER_VALUES = {"JobExecutionStatus": ("Skipped",)}


def older_schemas(schemas: dict[str, Any]) -> dict[str, Any]:
    """The components without the newer-only members, schemas and enum values (a copy)."""
    result = {name: schema for name, schema in schemas.items() if name not in _NEWER_SCHEMAS}
    for name, members in _NEWER_MEMBERS.items():
        if name in result:
            properties = {k: v for k, v in result[name].get("properties", {}).items() if k not in members}
            result[name] = {**result[name], "properties": properties}
    for name, values in _NEWER_VALUES.items():
        if name in result and "enum" in result[name]:
            result[name] = {**result[name], "enum": [v for v in result[name]["enum"] if v not in values]}
    return result
