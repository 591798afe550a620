"""`$filter` of the newer api-version's history (the ledger): a status and a time range of occurrences.

Grammar: terms joined by `and`, each `status eq '<status>'` or `<time> <op> <instant>` where `<time>` is
`expectedExecutionTime` or `occurrenceTime` (the same instant in a ledger entry), `<op>` one of ge, gt, le,
lt, eq, and `<instant>` an ISO 8601 date-time, bare, quoted or as `datetime'...'`. Names and operators ignore
case; one status at most; a range may be bounded on either side. Anything else is a 400 naming `$filter`.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import bad_request
from ..model import JobExecutionStatus, parse_instant_text
from .common import query_value
from .http import ApiRequest

_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_TERM = re.compile(
    r"^\s*(?P<name>\w+)\s+(?P<op>eq|ge|gt|le|lt)\s+(?:datetime)?(?:'(?P<quoted>[^']*)'|(?P<bare>\S+))"
    r"\s*$",
    re.IGNORECASE,
)
_TIMES = {"expectedexecutiontime", "occurrencetime"}
_USAGE = (
    "Use terms joined by 'and': status eq '<status>', and expectedExecutionTime (or occurrenceTime) "
    "ge, gt, le, lt or eq an ISO 8601 date-time."
)


@dataclass(frozen=True)
class LedgerFilter:
    status: JobExecutionStatus | None = None
    since: datetime | None = None  # the oldest occurrence
    since_inclusive: bool = True
    until: datetime | None = None  # the newest occurrence
    until_inclusive: bool = True


def _instant(text: str) -> datetime:
    try:
        return parse_instant_text(text)
    except ValueError as exc:
        raise bad_request(f"{text[:40]!r} is not an ISO 8601 date-time ({exc}). {_USAGE}", "$filter") from exc


def ledger_filter(request: ApiRequest) -> LedgerFilter:
    text = query_value(request, "$filter")
    if text is None or not text.strip():
        return LedgerFilter()
    found = LedgerFilter()
    for term in _AND.split(text.strip()):
        match = _TERM.match(term)
        if match is None:
            raise bad_request(f"The filter is not understood. {_USAGE}", "$filter")
        name, op = match["name"].lower(), match["op"].lower()
        literal = match["quoted"] if match["quoted"] is not None else match["bare"]
        if name == "status" and op == "eq" and found.status is None:
            try:
                found = _with(found, status=JobExecutionStatus(literal))
            except ValueError as exc:
                allowed = ", ".join(s.value for s in JobExecutionStatus)
                raise bad_request(f"'{literal[:40]}' is not a status; use one of {allowed}.", "$filter") from exc
        elif name in _TIMES:
            instant = _instant(literal)
            if op in ("ge", "gt", "eq"):
                found = _with(found, since=instant, since_inclusive=op != "gt")
            if op in ("le", "lt", "eq"):
                found = _with(found, until=instant, until_inclusive=op != "lt")
        else:
            raise bad_request(f"The filter term '{term.strip()[:60]}' is not supported. {_USAGE}", "$filter")
    return found


def _with(found: LedgerFilter, **changes: Any) -> LedgerFilter:
    return dataclasses.replace(found, **changes)
