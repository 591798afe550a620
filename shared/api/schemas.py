"""The wire schemas of each api-version (the OpenAPI document's `components.schemas`), and the refusal of
members they do not declare.

Built from the pydantic models, with what a version does not know hidden (shared/model/versions.py). The
newer api-version refuses a body member its schemas do not declare (400 naming the path,
shared/wire_members.py); 2016-03-01 ignores it, as the real service did.
"""

from __future__ import annotations

import copy
from functools import cache
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
from ..model.versions import VERSIONS, ApiVersion, hide_in_schemas
from ..wire_members import refusal

REF = "#/components/schemas/{model}"


@cache
def schemas_for(version: str) -> dict[str, Any]:
    models: list[type[BaseModel]] = [
        JobCollectionDefinition,
        JobDefinition,
        JobCollectionListResult,
        JobListResult,
        JobHistoryListResult,
        ErrorResponse,
    ]
    _, schema = models_json_schema([(m, "validation") for m in models], ref_template=REF)
    shown = hide_in_schemas(VERSIONS[version], copy.deepcopy(dict(schema.get("$defs", {}))))
    return _reachable(shown, [m.__name__ for m in models])


def _reachable(schemas: dict[str, Any], roots: list[str]) -> dict[str, Any]:
    """The schemas the roots still refer to: a hidden member's own schema (MissedRunPolicy under 2016-03-01)
    goes with it."""
    prefix = REF.split("{", 1)[0]
    seen: set[str] = set()
    todo = [name for name in roots if name in schemas]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        stack: list[Any] = [schemas[name]]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.startswith(prefix) and ref[len(prefix) :] in schemas:
                    todo.append(ref[len(prefix) :])
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return {name: schema for name, schema in schemas.items() if name in seen}


def refuse_unknown_members(version: ApiVersion, body: Any, root: type[BaseModel]) -> None:
    """400 for the first member of a PUT or PATCH body that `version`'s schema `root` does not declare, when
    that version refuses them."""
    refused = refusal(version.name, body, schemas_for(version.name), root.__name__)
    if refused is not None:
        raise refused
