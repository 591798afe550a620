"""The OpenAPI 3 documents of our API, one per documented api-version, generated from the pydantic models that
validate requests.

Schemas come from `models_json_schema` (one source of truth with validation), less what the api-version does
not know (shared/model/versions.py: 2016-03-01's document has no extension); the operations (the 15 of
Microsoft.Scheduler, with their parameters) come from the operation table (operations.py). Served at
GET /api/openapi.json (2016-03-01) and GET /api/openapi-2026-12-01-preview.json (operations.OPENAPI_ROUTES).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from ..model import (
    ErrorResponse,
    OverlapPolicy,
)
from ..model.versions import EXTENSIONS, NEWEST, STABLE, VERSIONS, ApiVersion
from .operations import OPENAPI_ROUTES, OPERATIONS
from .schemas import schemas_for

_REF = "#/components/schemas/{model}"
_QUERY: dict[str, dict[str, Any]] = {
    "$top": {
        "name": "$top",
        "in": "query",
        "description": "Caps the number of items (1-100); no nextLink beyond.",
        "schema": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    "$skip": {
        "name": "$skip",
        "in": "query",
        "description": "0-based index of the first entry.",
        "schema": {"type": "integer", "minimum": 0},
    },
    "$filter": {
        "name": "$filter",
        "in": "query",
        "description": "state eq 'Enabled' (jobs) or status eq 'Failed' (history); quotes optional.",
        "schema": {"type": "string"},
    },
    "$skiptoken": {
        "name": "$skiptoken",
        "in": "query",
        "description": "Continuation from a nextLink.",
        "schema": {"type": "string"},
    },
    "overlapPolicy": {
        "name": "overlapPolicy",
        "in": "query",
        "description": "The overlap policy of this occurrence instead of the job's (nothing is stored).",
        "schema": {"type": "string", "enum": [p.value for p in OverlapPolicy]},
    },
}


def _path_parameters(path: str) -> list[dict[str, Any]]:
    names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    return [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in names]


def _content(model: type[BaseModel]) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": _REF.format(model=model.__name__)}}}


def _api_version_parameter(version: ApiVersion) -> dict[str, Any]:
    """The api-version values this document describes: the version and its aliases (same rank)."""
    names = [name for name, known in VERSIONS.items() if known.rank == version.rank]
    return {"name": "api-version", "in": "query", "required": True, "schema": {"type": "string", "enum": names}}


def _operation(
    op_id: str,
    path: str,
    body: type[BaseModel] | None,
    responses: Mapping[str, type[BaseModel] | None],
    query: tuple[str, ...],
    version: ApiVersion,
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": op_id,
        "parameters": [*_path_parameters(path), _api_version_parameter(version), *(_QUERY[q] for q in query)],
        "responses": {
            **{
                status: (
                    {"description": "OK", "content": _content(model)} if model else {"description": "OK, empty body"}
                )
                for status, model in responses.items()
            },
            "default": {"description": "ARM error", "content": _content(ErrorResponse)},
        },
    }
    if body is not None:
        operation["requestBody"] = {"required": True, "content": _content(body)}
    return operation


def openapi_document(url: str = "") -> dict[str, Any]:
    """The document the request's address names (openapi.json: 2016-03-01); `url` (of the request for it) also
    sets the server so the paths resolve against this host."""
    base, _, name = url.split("?", 1)[0].rpartition("/") if url else ("/api", "", "openapi.json")
    version = VERSIONS[OPENAPI_ROUTES.get(name, STABLE)]
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        if op.documented:
            query = op.query + (op.newer_query if version.rank >= NEWEST.rank else ())
            paths.setdefault(op.path, {})[op.method.lower()] = _operation(
                op.name, op.path, op.body, op.responses, query, version
            )
    added = [
        f"{e.model.__name__}.{e.member}" + (f" {e.value.value}" if e.value is not None else "")
        for e in EXTENSIONS
        if version.knows(e) and not VERSIONS[STABLE].knows(e)
    ]
    extensions = f" Extensions to {STABLE}: {', '.join(added)}." if added else ""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Microsoft.Scheduler (successor)",
            "version": version.name,
            "description": f"Management API of Azure Scheduler, api-version {version.name}.{extensions}",
        },
        "servers": [{"url": base or "/api"}],
        "paths": paths,
        "components": {"schemas": schemas_for(version.name)},
    }
