"""ARM template expressions: `"[concat(parameters('a'), '/', variables('b'))]"` and friends, resolved offline.

Contract: `Evaluator(parameters, variables, scope).resolve(value, where)` walks JSON and replaces every
expression string (one that starts with `[` and ends with `]`; `[[` escapes a literal `[`) by its value.
Supported: string/number literals, property access (`.name`, `['x']`, `[0]`), and the template functions
old Scheduler templates used: parameters, variables, concat, format, resourceGroup, subscription,
resourceId, toLower, toUpper, trim, replace, string, int, bool, json, if, equals, not, and, or, empty,
length, coalesce, contains, startsWith, endsWith, split, substring, first, last, createArray,
createObject, union, add, sub, mul, div, mod, true, false, null, utcNow; and `listKeys(rule, ...).keyName`
(the name of the rule it lists). A parameter's value may be `Deferred`: computed when an expression first
reads it, so a parameter only ignored resources use is never asked for. What cannot be known offline raises
`Unresolvable` naming where it was met and how to supply the value (`--set PATH=VALUE`, or `--parameter`
for a parameter's default): `reference()` and the other `list*()` functions read deployed resources, a
`listKeys()` key is a secret (`secret=True`: the importer may ask for it), and any other function is not
supported. Nothing is guessed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+)|(?P<name>[A-Za-z_][\w]*)|(?P<punct>[(),.\[\]]))")


class TemplateError(ValueError):
    """A template the importer cannot resolve; the message names the expression and where it is."""


def supply_hint(where: str) -> str:
    """How a user gives the value the importer could not compute at `where` (a path in the template)."""
    if where.startswith("parameters.") and where.endswith(".defaultValue"):
        return f"pass --parameter {where[len('parameters.') : -len('.defaultValue')]}=VALUE"
    return f"pass --set '{where}=VALUE'"


class Unresolvable(TemplateError):
    """A value an offline import cannot compute; `secret` when it is a key of a deployed resource."""

    def __init__(self, where: str, what: str, secret: bool = False) -> None:
        super().__init__(f"{where}: {what}; {supply_hint(where)}")
        self.where, self.secret = where, secret


class Deferred:
    """A parameter's value, computed when an expression first reads it (then kept, error included)."""

    def __init__(self, compute: Callable[[], Any]) -> None:
        self._compute = compute
        self._outcome: tuple[bool, Any] | None = None

    def get(self) -> Any:
        if self._outcome is None:
            try:
                self._outcome = (True, self._compute())
            except TemplateError as error:
                self._outcome = (False, error)
        ok, value = self._outcome
        if not ok:
            raise value
        return value


@dataclass
class Scope:
    subscription: str
    group: str | None
    location: str | None


def _tokens(text: str, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        m = _TOKEN.match(text, at)
        if not m:
            raise TemplateError(f"{where}: cannot parse the expression near '{text[at : at + 20]}'")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        at = m.end()
    return out


@dataclass
class Evaluator:
    parameters: dict[str, Any]
    variables: dict[str, Any]
    scope: Scope
    _resolving: set[str] = field(default_factory=set)
    _resolved: dict[str, Any] = field(default_factory=dict)

    def resolve(self, value: Any, where: str) -> Any:
        if isinstance(value, dict):
            return {k: self.resolve(v, f"{where}.{k}") for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
            if value.startswith("[["):
                return value[1:]
            found = self.evaluate(value[1:-1], where)
            if isinstance(found, _Keys):
                raise Unresolvable(
                    where,
                    f"[{found.text}] lists the keys of a deployed resource (in a terminal the import asks for it)",
                    secret=True,
                )
            return found
        return value

    def evaluate(self, text: str, where: str) -> Any:
        tokens = _tokens(text, where)
        value, at = self._expression(tokens, 0, where, text)
        if at != len(tokens):
            raise TemplateError(f"{where}: unexpected '{tokens[at][1]}' in [{text}]")
        return value

    # expression := primary ( '.' name | '[' expression ']' )*
    def _expression(self, tokens: list[tuple[str, str]], at: int, where: str, text: str) -> tuple[Any, int]:
        if at >= len(tokens):
            raise TemplateError(f"{where}: incomplete expression [{text}]")
        kind, token = tokens[at]
        if kind == "str":
            value: Any = token[1:-1].replace("''", "'")
            at += 1
        elif kind == "num":
            value, at = int(token), at + 1
        elif kind == "name" and at + 1 < len(tokens) and tokens[at + 1][1] == "(":
            args: list[Any] = []
            at += 2
            offline = _reads_deployment(token)
            while at < len(tokens) and tokens[at][1] != ")":
                try:
                    arg, at = self._expression(tokens, at, where, text)
                except TemplateError:
                    if not offline:
                        raise
                    # reference(resourceId(..., parameters('site'))): what stops the import is reference(),
                    # which no parameter value would resolve; say that, not the missing parameter.
                    raise Unresolvable(
                        where, f"{token}() reads a deployed resource, which an offline import cannot (in [{text}])"
                    ) from None
                args.append(arg)
                if at < len(tokens) and tokens[at][1] == ",":
                    at += 1
            if at >= len(tokens):
                raise TemplateError(f"{where}: missing ')' in [{text}]")
            value, at = self._call(token, args, where, text), at + 1
        else:
            raise TemplateError(f"{where}: unexpected '{token}' in [{text}]")
        while at < len(tokens) and tokens[at][1] in (".", "["):
            if tokens[at][1] == ".":
                if at + 1 >= len(tokens) or tokens[at + 1][0] != "name":
                    raise TemplateError(f"{where}: a property name must follow '.' in [{text}]")
                value, at = self._member(value, tokens[at + 1][1], where), at + 2
            else:
                index, at = self._expression(tokens, at + 1, where, text)
                if at >= len(tokens) or tokens[at][1] != "]":
                    raise TemplateError(f"{where}: missing ']' in [{text}]")
                value, at = self._member(value, index, where), at + 1
        return value, at

    def _member(self, value: Any, key: Any, where: str) -> Any:
        if isinstance(value, _Keys):
            return value.member(str(key), where)
        try:
            if isinstance(value, dict):
                found = {k.lower(): k for k in value}
                if str(key).lower() not in found and isinstance(value, _Lazy):
                    raise TemplateError(f"{where}: {value.missing}")
                return value[found[str(key).lower()]]
            return value[key]
        except (KeyError, IndexError, TypeError):
            raise TemplateError(f"{where}: no member '{key}'") from None

    def _parameter(self, name: str, where: str) -> Any:
        for key, value in self.parameters.items():
            if key.lower() == str(name).lower():
                return value.get() if isinstance(value, Deferred) else value
        raise TemplateError(f"{where}: parameters('{name}') is not declared")

    def _variable(self, name: str, where: str) -> Any:
        key = next((k for k in self.variables if k.lower() == str(name).lower()), None)
        if key is None:
            raise TemplateError(f"{where}: variables('{name}') is not declared")
        if key not in self._resolved:
            if key in self._resolving:
                raise TemplateError(f"{where}: variables('{name}') refers to itself")
            self._resolving.add(key)
            try:
                self._resolved[key] = self.resolve(self.variables[key], f"variables.{key}")
            finally:
                self._resolving.discard(key)
        return self._resolved[key]

    def _resource_group(self, where: str) -> dict[str, Any]:
        scope = self.scope
        if not scope.group:
            raise TemplateError(f"{where}: resourceGroup() needs --resource-group")
        group: dict[str, Any] = {
            "name": scope.group,
            "id": f"/subscriptions/{scope.subscription}/resourceGroups/{scope.group}",
        }
        if scope.location:
            group["location"] = scope.location
        return _Lazy(group, where, "resourceGroup().location needs --location")

    def _resource_id(self, args: list[Any], where: str) -> str:
        strings = [str(a) for a in args]
        at = next((i for i, a in enumerate(strings) if "/" in a and "." in a.split("/")[0]), None)
        if at is None:
            raise TemplateError(f"{where}: resourceId() needs a resource type such as 'Microsoft.Scheduler/...'")
        before, kind, names = strings[:at], strings[at], strings[at + 1 :]
        subscription = before[0] if len(before) == 2 else self.scope.subscription
        group = before[-1] if before else self.scope.group
        types = kind.split("/")
        path = f"/subscriptions/{subscription}/resourceGroups/{group}/providers/{types[0]}"
        for child, name in zip(types[1:], names, strict=False):
            path += f"/{child}/{name}"
        return path

    def _call(self, name: str, args: list[Any], where: str, text: str) -> Any:
        fn = name.lower()
        table: dict[str, Callable[[], Any]] = {
            "parameters": lambda: self._parameter(args[0], where),
            "variables": lambda: self._variable(args[0], where),
            "concat": lambda: (
                sum((list(a) for a in args), [])
                if args and isinstance(args[0], list)
                else "".join(_text(a) for a in args)
            ),
            "format": lambda: re.sub(r"\{(\d+)(?::[^}]*)?\}", lambda m: _text(args[int(m.group(1)) + 1]), args[0]),
            "resourcegroup": lambda: self._resource_group(where),
            "subscription": lambda: {
                "subscriptionId": self.scope.subscription,
                "id": f"/subscriptions/{self.scope.subscription}",
                "displayName": self.scope.subscription,
            },
            "resourceid": lambda: self._resource_id(args, where),
            "tolower": lambda: str(args[0]).lower(),
            "toupper": lambda: str(args[0]).upper(),
            "trim": lambda: str(args[0]).strip(),
            "replace": lambda: str(args[0]).replace(args[1], args[2]),
            "string": lambda: _text(args[0]),
            "int": lambda: int(args[0]),
            "bool": lambda: args[0] if isinstance(args[0], bool) else str(args[0]).lower() == "true",
            "json": lambda: json.loads(args[0]),
            "if": lambda: args[1] if args[0] else args[2],
            "equals": lambda: args[0] == args[1],
            "not": lambda: not args[0],
            "and": lambda: all(args),
            "or": lambda: any(args),
            "empty": lambda: not args[0],
            "length": lambda: len(args[0]),
            "coalesce": lambda: next((a for a in args if a is not None), None),
            "contains": lambda: (
                (args[1] in args[0])
                if not isinstance(args[0], dict)
                else str(args[1]).lower() in {k.lower() for k in args[0]}
            ),
            "startswith": lambda: str(args[0]).lower().startswith(str(args[1]).lower()),
            "endswith": lambda: str(args[0]).lower().endswith(str(args[1]).lower()),
            "split": lambda: str(args[0]).split(args[1]),
            "substring": lambda: str(args[0])[args[1] : (args[1] + args[2]) if len(args) > 2 else None],
            "first": lambda: args[0][0],
            "last": lambda: args[0][-1],
            "createarray": lambda: list(args),
            "createobject": lambda: {args[i]: args[i + 1] for i in range(0, len(args), 2)},
            "union": lambda: (
                {k: v for a in args for k, v in a.items()}
                if isinstance(args[0], dict)
                else list(dict.fromkeys(x for a in args for x in a))
            ),
            "add": lambda: args[0] + args[1],
            "sub": lambda: args[0] - args[1],
            "mul": lambda: args[0] * args[1],
            "div": lambda: args[0] // args[1],
            "mod": lambda: args[0] % args[1],
            "true": lambda: True,
            "false": lambda: False,
            "null": lambda: None,
            "utcnow": lambda: datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
        }
        if fn == "listkeys":
            return _Keys(args, text)
        if _reads_deployment(fn):
            raise Unresolvable(
                where, f"{name}() reads a deployed resource, which an offline import cannot (in [{text}])"
            )
        if fn not in table:
            raise Unresolvable(where, f"the template function '{name}' is not supported offline (in [{text}])")
        try:
            return table[fn]()
        except TemplateError:
            raise
        except (IndexError, KeyError, TypeError, ValueError, ZeroDivisionError) as error:
            raise TemplateError(f"{where}: {name}() failed in [{text}]: {error}") from None


def _reads_deployment(function: str) -> bool:
    """reference() and the list*() functions read a deployed resource."""
    name = function.lower()
    return name == "reference" or name.startswith("list")


class _Keys:
    """What listKeys() answers: `keyName` is the name of the rule it lists; every key is a secret."""

    def __init__(self, args: list[Any], text: str) -> None:
        self.rule = str(args[0]).rstrip("/").rsplit("/", 1)[-1] if args else ""
        self.text = text

    def member(self, key: str, where: str) -> Any:
        if key.lower() == "keyname" and self.rule:
            return self.rule
        raise Unresolvable(
            where, f"[{self.text}] is a key of a deployed resource (in a terminal the import asks for it)", secret=True
        )


class _Lazy(dict[str, Any]):
    """resourceGroup(): a missing `location` is an error only when the template reads it."""

    def __init__(self, values: dict[str, Any], where: str, missing: str) -> None:
        super().__init__(values)
        self.where, self.missing = where, missing

    def __getitem__(self, key: str) -> Any:
        if key == "location" and key not in self:
            raise TemplateError(f"{self.where}: {self.missing}")
        return super().__getitem__(key)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"  # ARM's string(true) is "True"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return "" if value is None else str(value)
