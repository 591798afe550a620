"""HTTP route templates as the Functions host (ASP.NET Core routing) defines them.

Supported: literal segments (matched case-insensitively), `{name}`, `{name?}`, `{name=default}`,
`{*name}` / `{**name}` catch-all, inline constraints `{name:int}`, `{name:regex(...)}` (chained, with
arguments), complex segments such as `{file}.{ext}`, and `{{` / `}}` escapes. Unknown constraints are
ignored with a warning rather than failing the whole app.

Contract: `Router.resolve(method, raw_path)` returns the best `RouteMatch` for a request target, ordered by
ASP.NET inbound precedence (literal < complex < constrained < plain parameter < catch-all, segment by
segment; lower wins, then registration order), or a `MethodMismatch` when only the method rules matches
out, or None. Route values are URL-decoded; an absent optional parameter is absent from the values.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, TypeVar
from urllib.parse import unquote

log = logging.getLogger(__name__)
T = TypeVar("T")
Constraint = Callable[[str], bool]


def _fits(text: str, bits: int) -> bool:
    return re.fullmatch(r"[+-]?\d+", text) is not None and -(2 ** (bits - 1)) <= int(text) < 2 ** (bits - 1)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_guid(text: str) -> bool:
    try:
        uuid.UUID(text.strip("{}()"))
    except ValueError:
        return False
    return True


def _is_datetime(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _ints(argument: str) -> list[int]:
    return [int(part) for part in argument.split(",")]


def _build_constraint(name: str, argument: str | None) -> Constraint | None:
    """A predicate for one inline constraint, or None when the constraint is unknown (then ignored)."""
    simple: dict[str, Constraint] = {
        "int": lambda v: _fits(v, 32),
        "long": lambda v: _fits(v, 64),
        "alpha": lambda v: re.fullmatch(r"[A-Za-z]+", v) is not None,
        "bool": lambda v: v.lower() in ("true", "false"),
        "guid": _is_guid,
        "double": _is_float,
        "float": _is_float,
        "decimal": _is_float,
        "datetime": _is_datetime,
        "required": lambda v: v != "",
    }
    key = name.lower()
    if key in simple:
        return simple[key]
    if argument is None:
        return None
    if key == "regex":
        pattern = re.compile(argument, re.IGNORECASE)
        return lambda v: pattern.search(v) is not None
    if key == "length":
        bounds = _ints(argument)
        low, high = (bounds[0], bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
        return lambda v: low <= len(v) <= high
    if key in ("minlength", "maxlength"):
        limit = _ints(argument)[0]
        return (lambda v: len(v) >= limit) if key == "minlength" else (lambda v: len(v) <= limit)
    if key in ("min", "max", "range"):
        bounds = _ints(argument)
        low = bounds[0] if key in ("min", "range") else -(2**63)
        high = bounds[-1] if key in ("max", "range") else 2**63
        return lambda v: _fits(v, 64) and low <= int(v) <= high
    return None


@dataclass(frozen=True)
class Parameter:
    name: str
    optional: bool = False
    catch_all: bool = False
    default: str | None = None
    constraints: tuple[Constraint, ...] = ()

    def accepts(self, value: str) -> bool:
        return all(check(value) for check in self.constraints)


@dataclass(frozen=True)
class Segment:
    """One '/'-separated piece of a template: literal text and parameters."""

    parts: tuple[str | Parameter, ...]

    @property
    def parameter(self) -> Parameter | None:
        """The parameter when the segment is exactly one parameter."""
        only = self.parts[0] if len(self.parts) == 1 else None
        return only if isinstance(only, Parameter) else None

    @property
    def precedence(self) -> int:
        if len(self.parts) > 1:
            return 2
        param = self.parameter
        if param is None:
            return 1
        return 5 if param.catch_all else 3 if param.constraints else 4

    def match(self, text: str, values: dict[str, str]) -> bool:
        param = self.parameter
        if len(self.parts) == 1 and param is None:
            return unquote(text).casefold() == str(self.parts[0]).casefold()
        if param is not None:
            value = unquote(text)
            if value == "" or not param.accepts(value):
                return False
            values[param.name] = value
            return True
        return self._match_complex(unquote(text), values)

    def _match_complex(self, text: str, values: dict[str, str]) -> bool:
        pattern = ""
        params = [p for p in self.parts if isinstance(p, Parameter)]
        for i, part in enumerate(self.parts):
            if isinstance(part, str):
                # ASP.NET lets a trailing optional parameter drop together with the literal before it.
                follower = self.parts[i + 1] if i + 1 < len(self.parts) else None
                optional = isinstance(follower, Parameter) and follower.optional and i + 2 == len(self.parts)
                pattern += f"(?:{re.escape(part)}" if optional else re.escape(part)
            else:
                # Greedy parameters reproduce ASP.NET's right-to-left literal search: {a}.{b} on "x.y.z" is x.y / z.
                pattern += f"(?P<p{params.index(part)}>.+)" + (")?" if part.optional else "")
        match = re.fullmatch(pattern, text, re.IGNORECASE)
        if match is None:
            return False
        for index, param in enumerate(params):
            value = match.group(f"p{index}")
            if value is None:
                if param.default is not None:
                    values[param.name] = param.default
                continue
            if not param.accepts(value):
                return False
            values[param.name] = value
        return True


def _parse_parameter(text: str) -> Parameter:
    catch_all = text.startswith("*")
    text = text.lstrip("*")
    name_match = re.match(r"[^:=?]+", text)
    if name_match is None:
        raise ValueError(f"route parameter without a name: {{{text}}}")
    name, rest = name_match.group(0).strip(), text[name_match.end():]
    constraints: list[Constraint] = []
    while rest.startswith(":"):
        head = re.match(r":([A-Za-z]+)", rest)
        if head is None:
            raise ValueError(f"malformed constraint in route parameter {{{text}}}")
        constraint_name, rest, argument = head.group(1), rest[head.end():], None
        if rest.startswith("("):
            # The argument ends at the first ')' followed by another constraint, a default, '?', or the end,
            # so regex arguments may themselves contain parentheses.
            close = next(
                (i for i, ch in enumerate(rest) if ch == ")" and (i + 1 == len(rest) or rest[i + 1] in ":=?")),
                None,
            )
            if close is None:
                raise ValueError(f"unclosed constraint argument in route parameter {{{text}}}")
            argument, rest = rest[1:close], rest[close + 1:]
        check = _build_constraint(constraint_name, argument)
        if check is None:
            log.warning("route constraint %r is not supported locally; ignoring it", constraint_name)
        else:
            constraints.append(check)
    optional = rest.endswith("?")
    rest = rest.removesuffix("?")
    default = rest[1:] if rest.startswith("=") else None
    if rest and default is None:
        raise ValueError(f"unexpected {rest!r} in route parameter {{{text}}}")
    return Parameter(name, optional, catch_all, default, tuple(constraints))


def _split(template: str) -> list[list[str | Parameter]]:
    """Brace-aware split into segments; '/' inside a parameter (a regex argument) does not split."""
    segments: list[list[str | Parameter]] = [[]]
    literal = ""
    i = 0
    while i < len(template):
        ch = template[i]
        if ch in "{}" and template[i + 1:i + 2] == ch:
            literal, i = literal + ch, i + 2
        elif ch == "{":
            j = i + 1
            while j < len(template) and not (template[j] == "}" and template[j + 1:j + 2] != "}"):
                j += 2 if template[j] == "}" else 1
            if j >= len(template):
                raise ValueError(f"unclosed '{{' in route template {template!r}")
            if literal:
                segments[-1].append(literal)
                literal = ""
            inner = template[i + 1:j].replace("}}", "}").replace("{{", "{")
            segments[-1].append(_parse_parameter(inner))
            i = j + 1
        elif ch == "}":
            raise ValueError(f"unmatched '}}' in route template {template!r}")
        elif ch == "/":
            if literal:
                segments[-1].append(literal)
                literal = ""
            segments.append([])
            i += 1
        else:
            literal, i = literal + ch, i + 1
    if literal:
        segments[-1].append(literal)
    return [s for s in segments if s]


@dataclass(frozen=True)
class RouteTemplate:
    text: str
    segments: tuple[Segment, ...]

    @classmethod
    def parse(cls, template: str) -> RouteTemplate:
        cleaned = template.strip().removeprefix("~").strip("/")
        segments = tuple(Segment(tuple(parts)) for parts in _split(cleaned))
        for index, segment in enumerate(segments):
            param = segment.parameter
            if param is not None and param.catch_all and index != len(segments) - 1:
                raise ValueError(f"a catch-all parameter must be the last segment of route {template!r}")
        return cls(template, segments)

    @property
    def precedence(self) -> tuple[int, ...]:
        return tuple(segment.precedence for segment in self.segments)

    def match(self, path_segments: list[str]) -> dict[str, str] | None:
        """Route values for an already-split, still-encoded path, or None."""
        values: dict[str, str] = {}
        for index, segment in enumerate(self.segments):
            param = segment.parameter
            if param is not None and param.catch_all:
                rest = "/".join(unquote(s) for s in path_segments[index:])
                if rest:
                    if not param.accepts(rest):
                        return None
                    values[param.name] = rest
                elif param.default is not None:
                    values[param.name] = param.default
                return values
            if index >= len(path_segments):
                return values if self._fill_missing(index, values) else None
            if not segment.match(path_segments[index], values):
                return None
        return values if len(path_segments) == len(self.segments) else None

    def _fill_missing(self, start: int, values: dict[str, str]) -> bool:
        """Trailing segments absent from the path must be optional, defaulted, or catch-all parameters."""
        for segment in self.segments[start:]:
            param = segment.parameter
            if param is None or not (param.optional or param.catch_all or param.default is not None):
                return False
            if param.default is not None:
                values[param.name] = param.default
        return True


def split_path(raw_path: str) -> list[str]:
    """Path segments of a request target, still percent-encoded; query and trailing slash dropped."""
    path = raw_path.split("?", 1)[0].split("#", 1)[0]
    if "://" in path:
        path = "/" + path.split("://", 1)[1].partition("/")[2]
    pieces = path.split("/")[1:] if path.startswith("/") else path.split("/")
    return pieces[:-1] if pieces and pieces[-1] == "" else pieces


@dataclass(frozen=True)
class RouteMatch(Generic[T]):
    target: T
    values: dict[str, str]


@dataclass(frozen=True)
class MethodMismatch:
    allowed: tuple[str, ...]


@dataclass
class _Route(Generic[T]):
    template: RouteTemplate
    methods: frozenset[str] | None
    target: T
    order: int


@dataclass
class Router(Generic[T]):
    """Routes under a prefix (host.json routePrefix, "" for none) to targets."""

    prefix: str = "api"
    _routes: list[_Route[T]] = field(default_factory=list)

    def add(self, template: str, methods: Iterable[str] | None, target: T) -> None:
        allowed = None if methods is None else frozenset(m.upper() for m in methods)
        route = _Route(RouteTemplate.parse(template), allowed, target, len(self._routes))
        self._routes.append(route)
        self._routes.sort(key=lambda r: (r.template.precedence, r.order))

    def resolve(self, method: str, raw_path: str) -> RouteMatch[T] | MethodMismatch | None:
        segments = split_path(raw_path)
        prefix = [p for p in self.prefix.split("/") if p]
        head = [unquote(s).casefold() for s in segments[:len(prefix)]]
        if head != [p.casefold() for p in prefix]:
            return None
        rest = segments[len(prefix):]
        allowed: set[str] = set()
        for route in self._routes:
            values = route.template.match(rest)
            if values is None:
                continue
            if route.methods is None or method.upper() in route.methods:
                return RouteMatch(route.target, values)
            allowed |= route.methods
        return MethodMismatch(tuple(sorted(allowed))) if allowed else None
