"""Table Storage query filters, the subset the store sends, evaluated as the service evaluates them.

`substitute(filter, parameters)` puts the parameters in as the SDK does (each space-separated word `@name` becomes
the literal of `parameters[name]`); `compile_filter(text)` reads the result into a `Filter`.

The subset: comparisons `Property op literal` (op one of eq ne gt ge lt le) joined by `and`, `or`, `not ( ... )`
and parentheses (`not` binds tightest, then `and`, then `or`); literals 'string' (a quote doubled inside),
datetime'ISO 8601', integers (Int32; Int64 with an `L`), true and false: what str, int, datetime and bool
parameters become. Anything else (floats, guid'', X'', null, functions, an operator in capitals, a word the
grammar does not expect) raises `UnsupportedFilter` on the spot rather than guess an answer.

Comparisons follow the service: a property the entity lacks compares false (so `not (P eq x)` holds for it), as
does a value of another type than the literal (an Int64 property against an Int32 literal included: Azurite
orders those with gt/ge/lt/le, the store never asks); strings compare by code point (ordinal); Timestamp is the
time of the entity's last write.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from azure.data.tables import EdmType, EntityProperty

Values = Mapping[str, Any]

_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
}
_TOKEN = re.compile(
    r"\s*(?:(?P<paren>[()])|(?P<string>'(?:[^']|'')*')|(?P<datetime>datetime'[^']*')"
    r"|(?P<number>-?\d+L?)(?![\w.])|(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?!['\w]))"
)


class UnsupportedFilter(ValueError):
    """A filter outside the subset this store evaluates (or no filter at all)."""


@dataclass(frozen=True)
class Filter:
    matches: Callable[[Values], bool]
    partition: str | None  # when every match lies in one partition (a top-level `PartitionKey eq 'x'`)


def substitute(query_filter: str, parameters: Mapping[str, Any] | None) -> str:
    """The filter with its `@name` words replaced by their parameters' literals, as the SDK replaces them: only
    whole words (split on single spaces), and only when there are parameters."""
    if not parameters:
        return query_filter
    words = query_filter.split(" ")
    for index, word in enumerate(words):
        if word.startswith("@"):
            words[index] = _literal(parameters[word[1:]])
    return " ".join(words)


def compile_filter(text: str) -> Filter:
    tokens = _tokens(text)
    parser = _Parser(tokens)
    matches, partition = parser.disjunction()
    if parser.position != len(tokens):
        raise UnsupportedFilter(f"unexpected {tokens[parser.position][1]!r} in the filter {text!r}")
    return Filter(matches, partition)


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value) if value.bit_length() <= 32 else f"{value}L"
    if isinstance(value, datetime):
        return f"datetime'{value.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise UnsupportedFilter(f"a parameter of type {type(value).__name__} (str, int, bool and datetime are supported)")


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while text[position:].strip():
        found = _TOKEN.match(text, position)
        if found is None or found.lastgroup is None:
            raise UnsupportedFilter(f"cannot read the filter {text!r} from {text[position:].strip()[:30]!r}")
        tokens.append((found.lastgroup, found.group(found.lastgroup)))
        position = found.end()
    if not tokens:
        raise UnsupportedFilter("an empty filter")
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.position = 0

    def peek(self) -> str | None:
        return self.tokens[self.position][1] if self.position < len(self.tokens) else None

    def take(self, kind: str) -> str:
        if self.position >= len(self.tokens) or self.tokens[self.position][0] != kind:
            raise UnsupportedFilter(f"expected a {kind} at {self.peek()!r}")
        self.position += 1
        return self.tokens[self.position - 1][1]

    def disjunction(self) -> tuple[Callable[[Values], bool], str | None]:
        first, partition = self.conjunction()
        terms = [first]
        while self.peek() == "or":
            self.position += 1
            terms.append(self.conjunction()[0])
            partition = None
        return (first if len(terms) == 1 else lambda v: any(t(v) for t in terms)), partition

    def conjunction(self) -> tuple[Callable[[Values], bool], str | None]:
        first, partition = self.unary()
        terms = [first]
        while self.peek() == "and":
            self.position += 1
            term, one = self.unary()
            terms.append(term)
            partition = partition or one
        return (first if len(terms) == 1 else lambda v: all(t(v) for t in terms)), partition

    def unary(self) -> tuple[Callable[[Values], bool], str | None]:
        if self.peek() == "not":
            self.position += 1
            if self.peek() != "(":  # `not P eq x` reads differently in OData's grammar and Azurite's: say which
                raise UnsupportedFilter("`not` must be followed by a parenthesis")
            inner = self.unary()[0]
            return (lambda v: not inner(v)), None
        if self.peek() == "(":
            self.position += 1
            inner, partition = self.disjunction()
            if self.peek() != ")":
                raise UnsupportedFilter(f"expected ')' at {self.peek()!r}")
            self.position += 1
            return inner, partition
        return self.comparison()

    def comparison(self) -> tuple[Callable[[Values], bool], str | None]:
        name = self.take("word")
        operator = self.take("word")
        if name in _OPERATORS or name in ("and", "or", "not", "true", "false") or operator not in _OPERATORS:
            raise UnsupportedFilter(f"expected `Property op literal` at {name!r} {operator!r}")
        kind, literal = self._literal()
        compare = _OPERATORS[operator]

        def matches(values: Values) -> bool:
            found = values.get(name)
            return found is not None and _kind(found) == kind and compare(_plain(found), literal)

        partition = literal if name == "PartitionKey" and operator == "eq" else None
        return matches, partition

    def _literal(self) -> tuple[str, Any]:
        kind, text = self.tokens[self.position] if self.position < len(self.tokens) else ("end", "")
        self.position += 1
        if kind == "string":
            return "str", text[1:-1].replace("''", "'")
        if kind == "datetime":
            try:
                instant = datetime.fromisoformat(text[len("datetime'") : -1])
            except ValueError:
                raise UnsupportedFilter(f"not a datetime: {text!r}") from None
            return "datetime", instant if instant.tzinfo else instant.replace(tzinfo=UTC)
        if kind == "number":
            return ("int64", int(text[:-1])) if text.endswith("L") else ("int32", int(text))
        if kind == "word" and text in ("true", "false"):
            return "bool", text == "true"
        raise UnsupportedFilter(f"not a literal of the subset: {text!r}")


def _kind(value: Any) -> str:
    if isinstance(value, EntityProperty):
        return "int64" if value.edm_type == EdmType.INT64 else str(value.edm_type)
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int32"
    if isinstance(value, str):
        return "str"
    if isinstance(value, datetime):
        return "datetime"
    return type(value).__name__


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, EntityProperty) else value
