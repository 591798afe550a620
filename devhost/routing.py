"""HTTP route templates of `@app.route(route=...)`, matched by werkzeug.routing.

Template forms (those Functions apps use, this one included): literal segments, matched case-insensitively
as the host's ASP.NET Core routing does; `{name}`, one non-empty segment; and a last `{*name}` catch-all,
the rest of the path (absent when empty). Anything else (inline constraints, optional or default values,
several parts in one segment) raises ValueError when the route is added, so the local host never routes
differently from Azure without saying so.

Contract: `Router(prefix, routes)` with routes as (template, methods or None for all, target);
`resolve(method, raw_path)` returns a `RouteMatch` (target and URL-decoded values), a `MethodMismatch`
when only other methods' routes match, or None. Precedence is ASP.NET's for these forms, segment by
segment: a literal before a parameter before a catch-all, then the order routes were given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from urllib.parse import unquote

from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.routing import BaseConverter, Map, Rule

T = TypeVar("T")
_PARAMETER = re.compile(r"\{(?P<catch_all>\*{1,2})?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}")
_LITERAL = re.compile(r"[^{}]+")


class _Literal(BaseConverter):
    """A literal segment, case-insensitive; a converter so that werkzeug's exact static match is bypassed.

    Its lower weight keeps literals ahead of `{name}` segments (weight 100) and catch-alls (200).
    """

    weight = 10

    def __init__(self, map: Map, text: str) -> None:
        super().__init__(map)
        self.regex = f"(?i:{re.escape(text)})"


class _Segment(BaseConverter):
    """`{name}`: matched on the still-encoded path so an encoded '/' stays inside its segment."""

    def to_python(self, value: str) -> str:
        return unquote(value)


class _Rest(_Segment):
    """`{*name}`: the rest of the path."""

    regex = "[^/].*?"
    part_isolating = False
    weight = 200


@dataclass(frozen=True)
class RouteMatch(Generic[T]):
    target: T
    values: dict[str, str]


@dataclass(frozen=True)
class MethodMismatch:
    allowed: tuple[str, ...]


def _rule_paths(prefix: str, template: str) -> list[str]:
    """werkzeug rule strings for a template: one, plus one without the catch-all for an empty rest."""
    parts, catch_all = [], None
    segments = [s for s in prefix.split("/") if s] + [s for s in template.strip().strip("/").split("/") if s]
    for index, segment in enumerate(segments):
        parameter = _PARAMETER.fullmatch(segment)
        if parameter is None and _LITERAL.fullmatch(segment):
            parts.append(f"<lit({segment!r}):_{index}>")
        elif parameter is not None and not parameter["catch_all"]:
            parts.append(f"<segment:{parameter['name']}>")
        elif parameter is not None and index == len(segments) - 1:
            catch_all = f"<rest:{parameter['name']}>"
        else:
            raise ValueError(
                f"route {template!r}: segment {segment!r} is not supported by the local host "
                "(literal, {name} or a last {*name})"
            )
    base = "/" + "/".join(parts)
    return [base] if catch_all is None else [f"{base.rstrip('/')}/{catch_all}", base]


class Router(Generic[T]):
    def __init__(self, prefix: str, routes: Iterable[tuple[str, Iterable[str] | None, T]]) -> None:
        self._targets: list[T] = []
        rules: list[Rule] = []
        for template, methods, target in routes:
            allowed = None if methods is None else [m.upper() for m in methods]
            endpoint = len(self._targets)
            rules += [Rule(path, endpoint=endpoint, methods=allowed) for path in _rule_paths(prefix, template)]
            self._targets.append(target)
        converters = {"lit": _Literal, "segment": _Segment, "rest": _Rest}
        self._map = Map(rules, converters=converters, strict_slashes=False, merge_slashes=False)
        self._adapter = self._map.bind("localhost")

    def resolve(self, method: str, raw_path: str) -> RouteMatch[T] | MethodMismatch | None:
        path = raw_path.split("?", 1)[0].split("#", 1)[0].rstrip("/") or "/"
        try:
            endpoint, values = self._adapter.match(path, method.upper())
        except MethodNotAllowed as error:
            return MethodMismatch(tuple(sorted(set(error.valid_methods or ()) - {"HEAD", "OPTIONS"})))
        except NotFound:
            return None
        named: dict[str, Any] = {k: v for k, v in values.items() if not k.startswith("_")}
        return RouteMatch(self._targets[endpoint], named)
