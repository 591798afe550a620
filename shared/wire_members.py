"""Members of a request body that the API's schema does not declare, found against the OpenAPI document.

2016-03-01 ignores unknown members, as the real service did: a misspelt `"recurence"` turns a recurring job
into a one-shot, and a `retryPolicy` placed under `request` silently becomes the default policy; the newer
api-version refuses them (`refusal` below). Tools name them before sending (the CLI's `jobs create|update`,
`collections create -f` and `import`, and the console's editor through `POST /api/console/check`).

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
- The refusing api-version also refuses loose values (`loose_value`, issue 36): a boolean, a string or a
  fraction where the schema declares an integer (`true` is not 1, `"5"` is not 5), a boolean or a string where
  it declares a number, anything but true or false where it declares a boolean, anything but a string where it
  declares text (an instant given as Unix seconds), and text holding a control character (NUL, C0 but tab, line
  feed and carriage return, DEL, C1) or a lone surrogate, in a value or a free-form map's key. 2016-03-01 keeps
  the recorded service's leniency.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping
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
        return (
            f"{self.path}: not a member of {self.owner}: 2016-03-01 ignores it, the newer api-version refuses it{hint}"
        )

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
    """The 400 for the first unknown member, else the first loose value, under an api-version that refuses them;
    None otherwise."""
    if api_version not in refusing:
        return None
    unknown = unknown_members(document, schemas, root)
    if not unknown:
        loose = loose_value(document, schemas, root)
        return None if loose is None else bad_request(f"{loose[1]} (api-version {api_version}).", loose[0])
    first = unknown[0]
    hint = f" Did you mean '{first.suggestion}'?" if first.suggestion else ""
    return bad_request(f"the member is not part of {first.owner} in api-version {api_version}.{hint}", first.path)


# Text no value may hold under a refusing api-version: C0 controls but tab, line feed and carriage return; DEL; C1
# controls; lone surrogates (UTF-8 cannot carry them, so no store or target could either).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_WANTED = {"integer": "an integer", "number": "a number", "boolean": "true or false", "string": "a string"}
_FORMATS = {"date-time": "an ISO 8601 date-time", "duration": "an ISO 8601 duration"}


def _leaves(schema: Any, schemas: Mapping[str, Any], depth: int = 0) -> Iterator[dict[str, Any]]:
    """The alternatives a schema admits, through $ref, anyOf and oneOf; null left out."""
    if not isinstance(schema, dict) or depth > 32:
        return
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF):
        yield from _leaves(schemas.get(ref[len(_REF) :]), schemas, depth + 1)
        return
    choices = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(choices, list):
        for choice in choices:
            yield from _leaves(choice, schemas, depth + 1)
        return
    if schema.get("type") != "null":
        yield schema


def _control(text: str, what: str) -> str | None:
    bad = _CONTROL.search(text)
    if bad is None:
        return None
    return f"{what} holds U+{ord(bad.group()):04X}, a control character, at offset {bad.start()}"


def _scalar(value: Any, leaves: list[dict[str, Any]]) -> str | None:
    """Why `value` (a JSON scalar) is not of a type the schema declares; None when it is, or when the schema says
    nothing of scalars (the model decides)."""
    kinds = {leaf.get("type") for leaf in leaves}
    if None in kinds or not kinds & set(_WANTED):
        return None
    if isinstance(value, bool):
        fits = "boolean" in kinds
    elif isinstance(value, int):
        fits = bool(kinds & {"integer", "number"})
    elif isinstance(value, float):
        fits = "number" in kinds
    else:
        fits = "string" in kinds
    if fits:
        return None
    formats = [_FORMATS[f] for leaf in leaves if (f := leaf.get("format")) in _FORMATS]
    wanted = " or ".join(formats or [_WANTED[k] for k in ("integer", "number", "boolean", "string") if k in kinds])
    if "integer" in kinds and "number" in kinds:
        wanted = _WANTED["number"]
    return f"{json.dumps(value)[:40]} is not {wanted}"


def _loose(value: Any, schema: Any, schemas: Mapping[str, Any], path: str) -> tuple[str, str] | None:
    """(path, why) of the first loose value in `value` (at `path`), read against `schema`; None when none is."""
    if value is None:
        return None
    leaves = list(_leaves(schema, schemas))
    if isinstance(value, (bool, int, float, str)):
        return _loose_scalar(value, leaves, schemas, path)
    if isinstance(value, list):
        items = next((leaf["items"] for leaf in leaves if leaf.get("type") == "array" and "items" in leaf), None)
        return _first(_loose(item, items, schemas, f"{path}[{index}]") for index, item in enumerate(value))
    if isinstance(value, dict):
        return _loose_members(value, leaves, schemas, path)
    return None


def _first(found: Iterator[tuple[str, str] | None]) -> tuple[str, str] | None:
    """The first loose value found (lazily: what follows it is not read)."""
    return next((item for item in found if item is not None), None)


def _loose_scalar(
    value: bool | int | float | str, leaves: list[dict[str, Any]], schemas: Mapping[str, Any], path: str
) -> tuple[str, str] | None:
    if isinstance(value, str):
        bad = _control(value, "the text")
        if bad is not None:
            return path, bad
    arrays = [leaf["items"] for leaf in leaves if leaf.get("type") == "array" and "items" in leaf]
    if arrays and not any(leaf.get("type") != "array" for leaf in leaves):
        # A scalar where a list is declared: the model takes it as a list of one (schedule `hours: 5`).
        return _loose(value, arrays[0], schemas, path)
    reason = _scalar(value, leaves)
    return None if reason is None else (path, reason)


def _loose_members(
    value: dict[Any, Any], leaves: list[dict[str, Any]], schemas: Mapping[str, Any], path: str
) -> tuple[str, str] | None:
    """The first loose member of an object, read against the first alternative that declares its members or
    is a free-form map (another kind of alternative says nothing of members)."""
    for leaf in leaves:
        declared, extra = leaf.get("properties"), leaf.get("additionalProperties")
        if isinstance(declared, dict):
            return _first(_loose_declared(key, member, declared, schemas, path) for key, member in value.items())
        if isinstance(extra, dict):
            return _first(_loose_entry(key, member, extra, schemas, path) for key, member in value.items())
    return None


def _loose_declared(
    key: Any, member: Any, declared: dict[str, Any], schemas: Mapping[str, Any], path: str
) -> tuple[str, str] | None:
    """A declared member (an unknown one is not this check's: `unknown_members` reports it)."""
    canonical = next((name for name in declared if fold_case(name) == fold_case(str(key))), None)
    return None if canonical is None else _loose(member, declared[canonical], schemas, _member_path(path, key))


def _loose_entry(
    key: Any, member: Any, extra: dict[str, Any], schemas: Mapping[str, Any], path: str
) -> tuple[str, str] | None:
    """An entry of a free-form map: its value, and its key, which must be clean text too (the key's fault first)."""
    found = _loose(member, extra, schemas, _member_path(path, key))
    bad = _control(str(key), "the name")
    return found if bad is None else (path, f"{bad} ({str(key)[:40]!r})")


def _member_path(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def loose_value(document: Any, schemas: Mapping[str, Any], root: str) -> tuple[str, str] | None:
    """(path, why) of the first value of `document` that is not strictly of the type the schema `root` declares
    for it, or holds a control character; None when every value is."""
    return _loose(document, {"$ref": f"{_REF}{root}"}, schemas, "")
