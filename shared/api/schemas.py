"""The wire schemas of each api-version (the OpenAPI document's `components.schemas`), and the refusal of
members they do not declare.

Built from the pydantic models, with what a version does not know hidden (shared/model/versions.py): the
resources (`schemas_for`, what bodies are checked against) and, for the documents, every model an operation of
the table names (`document_schemas`: answers.py's too), with the spelling answers give the enums the service
camel-cases. The newer api-version refuses a body member its schemas do not declare (400 naming the path,
shared/wire_members.py); 2016-03-01 ignores it, as the real service did.
"""

from __future__ import annotations

import copy
from enum import Enum
from functools import cache
from typing import Annotated, Any, get_args, get_origin

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
from ..model.base import CamelCaseOnOutput, camel_case
from ..model.versions import VERSIONS, ApiVersion, hide_in_schemas
from ..wire_members import refusal

REF = "#/components/schemas/{model}"


# The resources and their lists: what every api-version's document holds, and what bodies are checked against.
RESOURCES: tuple[type[BaseModel], ...] = (
    JobCollectionDefinition,
    JobDefinition,
    JobCollectionListResult,
    JobListResult,
    JobHistoryListResult,
    ErrorResponse,
)


def schemas_for(version: str) -> dict[str, Any]:
    """The resources' schemas as `version` documents them."""
    return document_schemas(version, RESOURCES)


@cache
def document_schemas(version: str, models: tuple[type[BaseModel], ...], answered: bool = False) -> dict[str, Any]:
    """The schemas of `models` and of every schema they refer to, as `version` documents them (keyed by name);
    `answered`: with the spelling answers give the enums the service camel-cases (`answered_spellings`)."""
    _, schema = models_json_schema([(m, "validation") for m in models], ref_template=REF)
    shown = hide_in_schemas(VERSIONS[version], copy.deepcopy(dict(schema.get("$defs", {}))))
    found = _reachable(shown, [m.__name__ for m in models])
    return answered_spellings(found, models) if answered else found


def answered_spellings(schemas: dict[str, Any], models: tuple[type[BaseModel], ...]) -> dict[str, Any]:
    """Where an answer spells an enum camel-cased (CamelCaseOnOutput: `"state": "disabled"`, docs/wire-contract.md
    §2.12), the member takes either spelling: `<Enum>` (as requests send it; any case is accepted) or
    `<Enum>AsAnswered`, so that a client generated from the document reads the answers as they come."""
    for model in _closure(models):
        properties = schemas.get(model.__name__, {}).get("properties", {})
        for name, info in model.model_fields.items():
            enum = _camel_cased(info.annotation, info.metadata)
            if enum is None or enum.__name__ not in schemas or (info.alias or name) not in properties:
                continue
            answered = f"{enum.__name__}AsAnswered"
            spellings = [camel_case(value) for value in schemas[enum.__name__]["enum"]]
            schemas[answered] = {"type": "string", "enum": spellings, "description": f"{enum.__name__} as answered."}
            ref, member = REF.format(model=enum.__name__), properties[info.alias or name]
            if member.get("$ref") == ref:
                properties[info.alias or name] = {"anyOf": [member, {"$ref": REF.format(model=answered)}]}
            else:
                _widen(member, ref, REF.format(model=answered))
    return schemas


def _camel_cased(annotation: Any, metadata: list[Any]) -> type[Enum] | None:
    """The enum of a member its model emits camel-cased, found in its (possibly nested) annotation."""
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return annotation if CamelCaseOnOutput in metadata else None
    args = get_args(annotation)
    if get_origin(annotation) is Annotated:
        return _camel_cased(args[0], [*metadata, *args[1:]])
    return next((e for arg in args if (e := _camel_cased(arg, [])) is not None), None)


def _closure(models: tuple[type[BaseModel], ...]) -> list[type[BaseModel]]:
    """`models` and every model their members hold."""
    seen: list[type[BaseModel]] = []
    todo = list(models)
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.append(model)
        for info in model.model_fields.values():
            stack = [info.annotation]
            while stack:
                annotation = stack.pop()
                if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                    todo.append(annotation)
                stack.extend(get_args(annotation))
    return seen


def _widen(node: Any, ref: str, answered: str) -> None:
    """Each reference to `ref` under `node` becomes either `ref` or `answered`."""
    if isinstance(node, list):
        for item in node:
            _widen(item, ref, answered)
    elif isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, dict) and value.get("$ref") == ref:
                node[key] = {"anyOf": [value, {"$ref": answered}]}
            else:
                _widen(value, ref, answered)
        if isinstance(node.get("anyOf"), list) and {"$ref": ref} in node["anyOf"]:
            node["anyOf"].insert(node["anyOf"].index({"$ref": ref}) + 1, {"$ref": answered})


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
