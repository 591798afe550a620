"""Definitions as JSON documents: canonical member names, model validation, PATCH merging, secret carrying,
and the size a definition takes as stored.

Validation failures are InvalidDefinition naming the property path (`properties.recurrence.schedule.hours[2]`).

Rules (docs/decisions.md, Q9): a PATCH body is a partial definition; nested objects merge, arrays and
scalars replace, an explicit `null` removes the member (so `"authentication": null` removes
authentication), and absent members are kept, stored secrets included while the account or key name
they belong to is unchanged (drop_stale_secrets, the same rule as carry_secrets on PUT). When an object's `type`
changes (an action from Http to StorageQueue, an authentication from Basic to ClientCertificate),
members that belonged to the old type are dropped instead of merged into the new one.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from ..keys import fold_case
from ..model import JobActionType, WireModel
from .errors import InvalidDefinition

MAX_DEFINITION_BYTES = 16_000  # "Maximum job size is 16K": of a request body, and of a definition as stored

M = TypeVar("M", bound=WireModel)

# Action members that do not depend on the action type and survive a change of type.
_TYPE_INDEPENDENT = {"retryPolicy", "errorAction"}
# The target member each action type uses (Http and Https share `request`): the one table, also
# validation's (an action needs its type's target and no other).
ACTION_TARGETS = {
    JobActionType.HTTP: "request",
    JobActionType.HTTPS: "request",
    JobActionType.STORAGE_QUEUE: "queueMessage",
    JobActionType.SERVICE_BUS_QUEUE: "serviceBusQueueMessage",
    JobActionType.SERVICE_BUS_TOPIC: "serviceBusTopicMessage",
}
_TARGETS = {kind.value.lower(): member for kind, member in ACTION_TARGETS.items()}  # by a raw `type`, lowercased


def _nested_model(annotation: Any) -> tuple[str, type[BaseModel]] | None:
    """("model", M) or ("list", M) when a field holds model M or a list of them; None for plain values."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _nested_model(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        for arg in get_args(annotation):
            found = _nested_model(arg)
            if found:
                return found
        return None
    if origin is list:
        inner = _nested_model(get_args(annotation)[0])
        return ("list", inner[1]) if inner and inner[0] == "model" else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return ("model", annotation)
    return None


def canonical_keys(data: Any, model: type[BaseModel]) -> Any:
    """Rename the members of `data` to the model's JSON names, recursively (input names ignore case).

    Free-form maps (headers, tags, custom properties) keep their keys as sent. Unknown members are kept
    as they are, so the model later ignores them just as it does on PUT. A member named twice in
    different cases is a 400 (ARM refuses duplicate members).
    """
    if not isinstance(data, dict):
        return data
    fields = {}
    for name, field in model.model_fields.items():
        canonical = field.alias or name
        fields[fold_case(name)] = fields[fold_case(canonical)] = (canonical, field.annotation)
    result: dict[str, Any] = {}
    for key, value in data.items():
        canonical, annotation = fields.get(fold_case(key), (key, None)) if isinstance(key, str) else (key, None)
        if canonical in result and annotation is not None:
            # Property names ignore case, so `location` and `Location` are the same member sent twice.
            raise InvalidDefinition(f"The member '{canonical}' is given twice (property names ignore case).")
        nested = _nested_model(annotation) if annotation is not None else None
        if nested and nested[0] == "model":
            value = canonical_keys(value, nested[1])
        elif nested and isinstance(value, list):
            value = [canonical_keys(item, nested[1]) for item in value]
        result[canonical] = value
    return result


def _type_of(value: dict[str, Any]) -> str | None:
    kind = value.get("type")
    return kind.lower() if isinstance(kind, str) else None


def _rebase_on_type_change(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    old, new = _type_of(base), _type_of(patch)
    if old is None or new is None or old == new:
        return base
    if new in _TARGETS and old in _TARGETS:  # an action: keep the policy, the error action, and a shared target
        keep = _TYPE_INDEPENDENT | {_TARGETS[new]} if _TARGETS[new] == _TARGETS[old] else _TYPE_INDEPENDENT
        return {k: v for k, v in base.items() if k in keep}
    return {}  # an authentication of another kind: nothing of the old one applies


def merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """JSON merge-patch (RFC 7396) of `patch` onto `base`, with the type-change rule above."""
    result = dict(_rebase_on_type_change(base, patch))
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merge(result[key], value)
        else:
            result[key] = value
    return result


def _origin(uri: Any) -> str:
    parts = urlsplit(str(uri or ""))
    return f"{parts.scheme}://{parts.hostname}:{parts.port}".lower()


def _http_identity(action: dict[str, Any], holder: dict[str, Any]) -> str:
    # A credential belongs to the target it was written for: moving the job to another origin must not
    # carry a password, client certificate or client secret along to a host its writer may control.
    # An OAuth client secret also belongs to the client it authenticates and the token it is for: a changed
    # tenant, audience or client id needs the secret again (a secret kept for a new audience such as
    # https://management.azure.com/ would mint tokens its writer never meant to grant).
    request = action.get("request")
    if not isinstance(request, dict):
        request = {}
    oauth = "|".join(str(holder.get(name)) for name in ("tenant", "audience", "clientId"))
    return f"{holder.get('type')}|{_origin(request.get('uri'))}|{oauth}".lower()


def _member(name: str) -> Identity:
    return lambda action, holder: str(holder.get(name)).lower()


# Where write-only secrets live in a job's `action` (and, the same, in its `errorAction`), and what must be
# unchanged for a stored secret to still apply.
Identity = Callable[[dict[str, Any], dict[str, Any]], str]  # (the action, the secret's holder) -> key

_SECRET_HOLDERS: tuple[tuple[tuple[str, ...], Identity, tuple[str, ...]], ...] = (
    (("request", "authentication"), _http_identity, ("password", "pfx", "secret")),
    (("queueMessage",), _member("storageAccount"), ("sasToken",)),
    (("serviceBusQueueMessage", "authentication"), _member("sasKeyName"), ("sasKey",)),
    (("serviceBusTopicMessage", "authentication"), _member("sasKeyName"), ("sasKey",)),
)


def _walk(document: dict[str, Any] | None, path: tuple[str, ...]) -> dict[str, Any] | None:
    node: Any = document
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def carry_secrets(new_action: dict[str, Any] | None, stored_action: dict[str, Any] | None) -> None:
    """Fill secrets a PUT left out from the stored action, where they still apply (same auth type and target
    origin, storage account, or key name).

    So GET -> modify -> PUT, which every SDK does and which never sees secrets, keeps them working.
    """
    for prefix in ((), ("errorAction",)):
        for path, identity, secrets in _SECRET_HOLDERS:
            new = _walk(new_action, prefix + path)
            old = _walk(stored_action, prefix + path)
            if (
                new is None
                or old is None
                or _identity(identity, new_action, prefix, new) != _identity(identity, stored_action, prefix, old)
            ):
                continue
            for secret in secrets:
                if new.get(secret) is None and old.get(secret) is not None:
                    new[secret] = old[secret]


def drop_stale_secrets(
    merged_action: dict[str, Any] | None, stored_action: dict[str, Any] | None, patch_action: dict[str, Any] | None
) -> None:
    """The PATCH side of carry_secrets: a stored secret the patch did not send again is dropped where what it
    belongs to changed (another target origin, storage account or SAS key name), exactly as a PUT would drop it.

    So a PATCH that points a job at another account or key cannot take the old secret along to it.
    """
    for prefix in ((), ("errorAction",)):
        for path, identity, secrets in _SECRET_HOLDERS:
            merged = _walk(merged_action, prefix + path)
            old = _walk(stored_action, prefix + path)
            if (
                merged is None
                or old is None
                or _identity(identity, merged_action, prefix, merged) == _identity(identity, stored_action, prefix, old)
            ):
                continue
            sent = _walk(patch_action, prefix + path) or {}
            for secret in secrets:
                if sent.get(secret) is None:
                    merged.pop(secret, None)


def _identity(
    identity: Identity, action: dict[str, Any] | None, prefix: tuple[str, ...], holder: dict[str, Any]
) -> str:
    return identity(_walk(action, prefix) or {}, holder)


def error_path(loc: tuple[Any, ...]) -> str:
    """pydantic's ('properties', 'recurrence', 'schedule', 'hours', 2) -> properties.recurrence.schedule.hours[2]."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif str(part).startswith(("function-", "json-or-python", "lax-or-strict")):
            continue  # validator names pydantic puts in loc for unions and wrappers
        else:
            path += ("." if path else "") + str(part)
    return path


def validate(model: type[M], data: dict[str, Any]) -> M:
    """Validate a decoded document; the first problem is an InvalidDefinition naming its property path."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise InvalidDefinition(str(first["msg"]), error_path(tuple(first["loc"])) or None) from exc
    except RecursionError as exc:
        raise InvalidDefinition("The request body is nested too deeply.") from exc


def document_size(document: dict[str, Any]) -> int:
    """Bytes of a definition as the store keeps it (compact JSON, non-ASCII escaped, so one byte per character):
    what the 16,000 job size limit measures, and what keeps a stored document within a table property."""
    return len(json.dumps(document, separators=(",", ":")).encode("utf-8"))
