"""The OpenAPI 3.1 documents of our API, one per documented api-version, built from the operation table.

Each operation of the table (operations.py) is in the documents of the api-versions that serve it: 2016-03-01's
holds the 15 operations of Microsoft.Scheduler's published spec (paths, operationIds, bodies and answers as
there); the newest holds those, the newer operations (occurrences, backfill), and what is served beside the
api-versions: role assignments (with Microsoft.Authorization's api-versions), health and these documents.
For each operation: its path parameters, api-version, the query parameters and headers its handler reads in that
api-version (`query`, `newer_query`; what-if's `whatIf` and `x-ms-what-if` where it answers a dry run), its
body, its answers (the dry run's too: `x-what-if-answer`, and in the 200's content where the write answers a body),
and the ARM error shape for every error (`default`; 503 with Retry-After). Schemas come from the pydantic models
(schemas.py: what the api-version does not know hidden); the words from openapi_words.py.
tests/api/test_openapi_complete.py checks the documents against what the handlers read and the versions refuse.
Served at GET /api/openapi.json (2016-03-01) and GET /api/openapi-2026-12-01-preview.json (operations.OPENAPI_ROUTES).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..model import ErrorResponse
from ..model.versions import EXTENSIONS, NEWEST, STABLE, VERSIONS, ApiVersion
from . import openapi_words as words
from .operations import OPENAPI_ROUTES, OPERATIONS, Operation
from .schemas import REF, document_schemas
from .what_if import WHAT_IF_HEADER

WHAT_IF_QUERY = "whatIf"
_REQUEST_ID = {"x-ms-request-id": {"$ref": "#/components/headers/RequestId"}}


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": REF.format(model=model.__name__)}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def in_document(op: Operation, version: ApiVersion) -> bool:
    """The document of `version` describes `op`: the api-versions since the one that added it; what is served
    beside the api-versions (`since` None) in the newest document."""
    if op.since is None:
        return version.rank >= NEWEST.rank
    return VERSIONS[op.since].rank <= version.rank


def query_parameters(op: Operation, version: ApiVersion) -> tuple[str, ...]:
    """The query parameters beyond api-version that `op` serves in `version`."""
    newer = version.rank >= NEWEST.rank
    return op.query + (op.newer_query if newer else ()) + ((WHAT_IF_QUERY,) if newer and op.what_if else ())


def header_parameters(op: Operation, version: ApiVersion) -> tuple[str, ...]:
    """The request headers `op` reads in `version` (its body's Content-Type aside: `requestBody` says it)."""
    return (WHAT_IF_HEADER,) if version.rank >= NEWEST.rank and op.what_if else ()


def _api_version_enum(op: Operation) -> str:
    """The schema naming the api-versions `op` takes: ours, or another provider's (role assignments)."""
    return op.name.split("_", 1)[0] + "ApiVersion" if op.api_versions else "ApiVersion"


def _api_version(op: Operation) -> list[dict[str, Any]]:
    if op.api_versions == ():
        return []
    schema = {"$ref": REF.format(model=_api_version_enum(op))}
    return [
        {"name": "api-version", "in": "query", "required": True, "description": "The API version.", "schema": schema}
    ]


def _parameters(op: Operation, version: ApiVersion) -> list[dict[str, Any]]:
    names = [part[1:-1] for part in op.route.split("/") if part.startswith("{")]
    path = [
        {
            "name": n,
            "in": "path",
            "required": True,
            "description": words.PATH_PARAMETERS[n],
            "schema": {"type": "string"},
        }
        for n in names
    ]
    query = []
    for name in query_parameters(op, version):
        if name == "$filter":  # its grammar is the operation's, and the version's
            described = {
                "description": words.FILTERS[op.name, version.rank >= NEWEST.rank],
                "schema": {"type": "string"},
            }
        else:
            described = dict(words.QUERY[name])
        if (op.name, name) in words.QUERY_OF:
            described["description"] = words.QUERY_OF[op.name, name]
        query.append({"name": name, "in": "query", "required": False, **described})
    headers = [
        {"name": h, "in": "header", "required": False, "description": words.WHAT_IF_HEADER_DESCRIPTION}
        | {"schema": {"type": "boolean"}}
        for h in header_parameters(op, version)
    ]
    return path + _api_version(op) + query + headers


def _responses(op: Operation, version: ApiVersion) -> dict[str, Any]:
    dry = op.what_if if version.rank >= NEWEST.rank else None
    answers: dict[str, Any] = {}
    for status, model in op.responses.items():
        answer: dict[str, Any] = {"description": words.STATUSES[status], "headers": _REQUEST_ID}
        if model is not None:
            schema: dict[str, Any] = _ref(model)
            if status == "200" and dry is not None and dry is not model:  # one status, the write's or the dry run's
                schema = {"anyOf": [_ref(dry), _ref(model)]}
            answer["content"] = _json(schema)
        if status == "200" and dry is not None:
            shape = f"a {dry.__name__}" if model is not None else f"a {dry.__name__} (without it: an empty body)"
            answer["description"] += ". " + words.WHAT_IF_ANSWER.format(answer=shape)
        answers[status] = answer
    error = {"description": words.ERROR, "headers": _REQUEST_ID, "content": _json(_ref(ErrorResponse))}
    if op.handler is not None:  # stored resources: storage may be out
        retry = {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}}
        answers.setdefault("503", {**error, "description": words.UNAVAILABLE, "headers": {**_REQUEST_ID, **retry}})
    return {**answers, "default": error}


def _operation(op: Operation, version: ApiVersion) -> dict[str, Any]:
    newer = version.rank >= NEWEST.rank
    operation: dict[str, Any] = {
        "operationId": op.operation_id or op.name,
        "tags": [op.name.split("_", 1)[0]],
        "description": words.DESCRIPTIONS[op.name] + (words.NEWER_DESCRIPTIONS.get(op.name, "") if newer else ""),
        "parameters": _parameters(op, version),
        "responses": _responses(op, version),
    }
    if op.body is not None:
        operation["requestBody"] = {"required": True, "content": _json(_ref(op.body))}
    if op.api_versions == ():  # anonymous: OpenAPI and health
        operation["security"] = []
    ok = op.responses.get("200")
    if ok is not None and "next_link" in ok.model_fields:
        operation["x-ms-pageable"] = {"nextLinkName": "nextLink"}
    if newer and op.what_if is not None:
        operation["x-what-if-answer"] = _ref(op.what_if)
    return operation


def _models(operations: list[Operation], version: ApiVersion) -> tuple[type[BaseModel], ...]:
    found: dict[str, type[BaseModel]] = {ErrorResponse.__name__: ErrorResponse}
    for op in operations:
        dry = op.what_if if version.rank >= NEWEST.rank else None
        for model in (op.body, dry, *op.responses.values()):
            if model is not None:
                found.setdefault(model.__name__, model)
    return tuple(found.values())


def _api_version_names(op: Operation, version: ApiVersion) -> list[str]:
    """The api-versions `op` takes: another provider's, or ours in the document of `version` (it and its aliases)."""
    if op.api_versions:
        return list(op.api_versions)
    return [name for name, known in VERSIONS.items() if known.rank == version.rank]


def _components(operations: list[Operation], version: ApiVersion) -> dict[str, Any]:
    # One enum schema per set of api-versions, so that a generated client has one type for each.
    takes = {_api_version_enum(op): op for op in operations if op.api_versions != ()}
    enums = {name: {"type": "string", "enum": _api_version_names(op, version)} for name, op in takes.items()}
    return {
        "schemas": {**document_schemas(version.name, _models(operations, version), answered=True), **enums},
        "headers": {"RequestId": {"description": "Identifies the request.", "schema": {"type": "string"}}},
        "securitySchemes": words.SECURITY_SCHEMES,
    }


def openapi_document(url: str = "") -> dict[str, Any]:
    """The document the request's address names (openapi.json: 2016-03-01); `url` (of the request for it) also
    sets the server so the paths resolve against this host."""
    base, _, name = url.split("?", 1)[0].rpartition("/") if url else ("/api", "", "openapi.json")
    version = VERSIONS[OPENAPI_ROUTES.get(name, STABLE)]
    operations = [op for op in OPERATIONS if in_document(op, version)]
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, version)
    added = [
        f"{e.model.__name__}.{e.member}" + (f" {e.value.value}" if e.value is not None else "")
        for e in EXTENSIONS
        if version.knows(e) and not VERSIONS[STABLE].knows(e)
    ]
    extensions = f" Extensions to {STABLE}: {', '.join(added)}." if added else ""
    if version.rank >= NEWEST.rank:
        extensions += (
            " Also served: the occurrences preview and explanation, backfill, what-if on the writes that answer a dry "
            "run, role assignments (Microsoft.Authorization's api-versions), health and these documents."
        )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Microsoft.Scheduler (successor)",
            "version": version.name,
            "description": f"Management API of Azure Scheduler, api-version {version.name}.{extensions}",
        },
        "servers": [{"url": base or "/api"}],
        "security": [{"bearer": []}, {"functionKey": []}, {}],  # by SCHEDULER_AUTH: entra, key, none
        "paths": paths,
        "components": _components(operations, version),
    }
