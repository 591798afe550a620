"""`$filter` of the two filterable lists: `state eq 'Enabled'` (jobs) and `status eq 'Failed'` (history).

docs/decisions.md [16]: the literal may be quoted or not, and matching ignores case; any other expression
is a 400 naming `$filter`.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import TypeVar

from ..errors import bad_request
from ..model import JobExecutionStatus, JobState
from .common import query_value
from .http import ApiRequest

E = TypeVar("E", bound=Enum)

_EQUALS = re.compile(r"^\s*(?P<name>\w+)\s+eq\s+(?:'(?P<quoted>[^']*)'|(?P<bare>\w+))\s*$", re.IGNORECASE)


def _equality(request: ApiRequest, prop: str, enum: type[E]) -> E | None:
    text = query_value(request, "$filter")
    if text is None or not text.strip():
        return None
    match = _EQUALS.match(text)
    allowed = ", ".join(str(m.value) for m in enum)
    if match is None or match["name"].lower() != prop:
        raise bad_request(f"Only \"{prop} eq '<value>'\" is supported, with a value among {allowed}.", "$filter")
    literal = match["quoted"] if match["quoted"] is not None else match["bare"]
    try:
        return enum(literal)
    except ValueError as exc:
        raise bad_request(f"'{literal}' is not a {prop}; use one of {allowed}.", "$filter") from exc


def job_state_filter(request: ApiRequest) -> JobState | None:
    return _equality(request, "state", JobState)


def history_status_filter(request: ApiRequest) -> JobExecutionStatus | None:
    return _equality(request, "status", JobExecutionStatus)
