"""The newer api-version (model.versions NEWEST, `2026-12-01-preview`) beside 2016-03-01: which requests ask
for it, and the collection and history answers of an older version without what only the newer one knows.

Which member or value each version knows is `EXTENSIONS` in shared/model/versions.py (the one table); this
module only applies it where shared/api/jobs.py's rendering does not:
- `is_newer(request)`; `require_newer(request, what)` for what exists in the newer version only (its routes,
  `whatIf`, the ledger's `$filter` terms): a 400 naming the version otherwise;
- `older_answer(operation, request, response)`: a collection or history answer as the request's api-version
  shows it (`versions.hide`), so 2016-03-01 answers exactly as the old service did.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel

from ..errors import ApiError
from ..model import JobCollectionDefinition, JobHistoryDefinition
from ..model.versions import NEWEST, ApiVersion, api_version, hide
from .common import query_value
from .http import ApiRequest, ApiResponse


def _version(request: ApiRequest) -> ApiVersion | None:
    return api_version(query_value(request, "api-version"))


def is_newer(request: ApiRequest) -> bool:
    version = _version(request)
    return version is not None and version.rank >= NEWEST.rank


def require_newer(request: ApiRequest, what: str) -> None:
    if not is_newer(request):
        raise ApiError(400, "MissingOrInvalidRequiredQueryParameter", f"{what} needs api-version {NEWEST.name}.")


def _model_of(operation: str) -> type[BaseModel] | None:
    """The resource an operation answers with, where the API's own rendering does not hide by version (jobs do:
    shared/api/render.py)."""
    if operation == "Jobs_ListJobHistory":
        return JobHistoryDefinition
    if operation.startswith("JobCollections_"):
        return JobCollectionDefinition
    return None


def older_answer(operation: str, request: ApiRequest, response: ApiResponse) -> ApiResponse:
    """The response as the request's api-version shows it (unchanged for the newest version, for an unknown
    version, which the handler refused, and for bodies without a resource)."""
    model = _model_of(operation)
    version = _version(request)
    body = response.body
    if model is None or version is None or version.rank >= NEWEST.rank or not isinstance(body, dict):
        return response
    if isinstance(body.get("value"), list):
        items: list[Any] = [
            hide(version, model, dict(item)) if isinstance(item, dict) else item for item in body["value"]
        ]
        return dataclasses.replace(response, body={**body, "value": items})
    return dataclasses.replace(response, body=hide(version, model, dict(body)))
