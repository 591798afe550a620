"""The OpenAPI 3 document of our API, generated from the pydantic models that validate requests.

Schemas come from `models_json_schema` (one source of truth with validation); the operations (the 15 of
Microsoft.Scheduler 2016-03-01, with their parameters) come from the operation table (operations.py).
Served at GET /api/openapi.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from ..model import (
    ErrorResponse,
    JobCollectionDefinition,
    JobCollectionListResult,
    JobDefinition,
    JobHistoryListResult,
    JobListResult,
)
from .common import SUPPORTED_API_VERSIONS
from .newer import older_schemas
from .operations import OPERATIONS

_REF = "#/components/schemas/{model}"
_QUERY: dict[str, dict[str, Any]] = {
    "api-version": {"name": "api-version", "in": "query", "required": True,
                    "schema": {"type": "string", "enum": list(SUPPORTED_API_VERSIONS)}},
    "$top": {"name": "$top", "in": "query", "description": "Caps the number of items (1-100); no nextLink beyond.",
             "schema": {"type": "integer", "minimum": 1, "maximum": 100}},
    "$skip": {"name": "$skip", "in": "query", "description": "0-based index of the first entry.",
              "schema": {"type": "integer", "minimum": 0}},
    "$filter": {"name": "$filter", "in": "query",
                "description": "state eq 'Enabled' (jobs) or status eq 'Failed' (history); quotes optional.",
                "schema": {"type": "string"}},
    "$skiptoken": {"name": "$skiptoken", "in": "query", "description": "Continuation from a nextLink.",
                   "schema": {"type": "string"}},
}


def _path_parameters(path: str) -> list[dict[str, Any]]:
    names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    return [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in names]


def _content(model: type[BaseModel]) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": _REF.format(model=model.__name__)}}}


@lru_cache(maxsize=1)
def _components() -> dict[str, Any]:
    models: list[type[BaseModel]] = [JobCollectionDefinition, JobDefinition, JobCollectionListResult, JobListResult,
                                     JobHistoryListResult, ErrorResponse]
    _, schema = models_json_schema([(m, "validation") for m in models], ref_template=_REF)
    return older_schemas(dict(schema.get("$defs", {})))  # the newer api-version's members are not 2016-03-01's


def _operation(op_id: str, path: str, body: type[BaseModel] | None, responses: Mapping[str, type[BaseModel] | None],
               query: tuple[str, ...]) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": op_id,
        "parameters": [*_path_parameters(path), _QUERY["api-version"], *(_QUERY[q] for q in query)],
        "responses": {
            **{status: ({"description": "OK", "content": _content(model)} if model else
                        {"description": "OK, empty body"}) for status, model in responses.items()},
            "default": {"description": "ARM error", "content": _content(ErrorResponse)},
        },
    }
    if body is not None:
        operation["requestBody"] = {"required": True, "content": _content(body)}
    return operation


def openapi_document(url: str = "") -> dict[str, Any]:
    """The document; `url` (of the request for it) sets the server so the paths resolve against this host."""
    base = url.split("?", 1)[0].rsplit("/openapi.json", 1)[0] if url else "/api"
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        if op.documented:
            paths.setdefault(op.path, {})[op.method.lower()] = _operation(op.name, op.path, op.body, op.responses,
                                                                          op.query)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Microsoft.Scheduler (successor)", "version": "2016-03-01",
                 "description": "Management API of Azure Scheduler, api-version 2016-03-01."},
        "servers": [{"url": base or "/api"}],
        "paths": paths,
        "components": {"schemas": _components()},
    }
