"""Members of a request body that the API's schema does not declare, found against the OpenAPI document.

The API ignores unknown members (every api-version today), as the real service did: a misspelt `"recurence"` turns a
recurring job into a one-shot, and a `retryPolicy` placed under `request` silently becomes the default
policy. Tools warn about them instead (the CLI's `jobs create|update`, `collections create -f` and `import`,
and the console's editor through `POST /api/console/check`).

Contract:
- `unknown_members(document, schemas, root)` walks a JSON document against `schemas` (the OpenAPI
  document's `components.schemas`, e.g. what `GET /api/openapi.json` serves) from the schema named `root`
  (`JobDefinition`, `JobCollectionDefinition`) and answers every member no schema declares, in document
  order, each with its property path as the API's validation messages write it
  (`properties.action.request.retryPolicy`, `properties.recurrence.schedule.monthlyOccurrences[0].dya`) and,
  for a likely misspelling, the declared name it resembles. Names match case-insensitively (ASCII only), as
  the API binds them. Read-only members (`id`, `properties.status`) are declared, so not reported; members
  of free-form maps (`headers`, `tags`, `customMessageProperties`) are never unknown.
- `refusal(api_version, document, schemas, root[, refusing])`: the 400 a refusing api-version answers for the
  first unknown member (an ApiError naming its path), or None. The extension api-version (2026-12-01-preview)
  refuses (shared/api/schemas.py calls this before a PUT or PATCH body is validated); 2016-03-01 stays
  lenient as the real service was.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ApiError, bad_request
from .keys import fold_case
from .model.versions import PREVIEW

# api-versions that answer 400 for an unknown member instead of ignoring it.
REFUSING_API_VERSIONS: frozenset[str] = frozenset({PREVIEW})
_REF = "#/components/schemas/"


@dataclass(frozen=True)
class UnknownMember:
    path: str  # e.g. properties.recurence
    owner: str  # the schema whose members were expected there, e.g. JobProperties
    suggestion: str | None = None  # what was likely meant: `recurrence`, or `properties.action.retryPolicy`

    def message(self) -> str:
        hint = f" (did you mean '{self.suggestion}'?)" if self.suggestion else ""
        return f"{self.path}: not a member of {self.owner}, so the API ignores it{hint}"

    def to_json(self) -> dict[str, str | None]:
        return {"path": self.path, "owner": self.owner, "suggestion": self.suggestion, "message": self.message()}


def _resolve(schema: Any, schemas: Mapping[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """(the schema's name when it is a reference, the object schema it stands for) through $ref and anyOf."""
    name = None
    for _ in range(32):  # a reference chain longer than this is a broken document, not a schema
        if not isinstance(schema, dict):
            return name, {}
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF):
            name = ref[len(_REF) :]
            schema = schemas.get(name, {})
            continue
        choices = [
            c
            for c in (schema.get("anyOf") or schema.get("oneOf") or [])
            if isinstance(c, dict) and c.get("type") != "null"
        ]
        if len(choices) == 1 and not schema.get("properties"):
            schema = choices[0]
            continue
        return name, schema
    return name, {}


def _suggestion(key: str, declared: dict[str, Any], outer: list[tuple[str, dict[str, Any]]]) -> str | None:
    """A declared name the key misspells, else the path where an enclosing object declares it (a member
    placed one level too deep, like `request.retryPolicy` for `action.retryPolicy`)."""
    close = difflib.get_close_matches(key, list(declared), n=1, cutoff=0.6)
    if close:
        return close[0]
    for where, members in reversed(outer):
        hit = next((name for name in members if fold_case(name) == fold_case(key)), None)
        if hit is not None:
            return f"{where}.{hit}" if where else hit
    return None


def _walk(
    value: Any,
    schema: Any,
    schemas: Mapping[str, Any],
    path: str,
    found: list[UnknownMember],
    outer: list[tuple[str, dict[str, Any]]],
) -> None:
    name, resolved = _resolve(schema, schemas)
    if isinstance(value, list):
        items = resolved.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                _walk(item, items, schemas, f"{path}[{index}]", found, outer)
        return
    if not isinstance(value, dict):
        return
    declared = resolved.get("properties")
    if isinstance(declared, dict):
        by_fold = {fold_case(key): key for key in declared}
        for key, member in value.items():
            where = f"{path}.{key}" if path else str(key)
            canonical = by_fold.get(fold_case(str(key)))
            if canonical is None:
                found.append(
                    UnknownMember(
                        where, name or resolved.get("title") or "the body", _suggestion(str(key), declared, outer)
                    )
                )
            else:
                _walk(member, declared[canonical], schemas, where, found, [*outer, (path, declared)])
        return
    extra = resolved.get("additionalProperties")
    if isinstance(extra, dict):
        for key, member in value.items():
            _walk(member, extra, schemas, f"{path}.{key}" if path else str(key), found, outer)


def unknown_members(document: Any, schemas: Mapping[str, Any], root: str) -> list[UnknownMember]:
    """Every member of `document` that the schema `root` (and the schemas it refers to) does not declare."""
    found: list[UnknownMember] = []
    _walk(document, {"$ref": f"{_REF}{root}"}, schemas, "", found, [])
    return found


def refusal(
    api_version: str | None,
    document: Any,
    schemas: Mapping[str, Any],
    root: str,
    refusing: frozenset[str] = REFUSING_API_VERSIONS,
) -> ApiError | None:
    """The 400 for the first unknown member under an api-version that refuses them; None otherwise."""
    if api_version not in refusing:
        return None
    unknown = unknown_members(document, schemas, root)
    if not unknown:
        return None
    first = unknown[0]
    hint = f" Did you mean '{first.suggestion}'?" if first.suggestion else ""
    return bad_request(f"the member is not part of {first.owner} in api-version {api_version}.{hint}", first.path)
