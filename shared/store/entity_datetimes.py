"""Edm.DateTime values of the Tables service read in a fraction of a microsecond: `install()`.

azure-data-tables turns every Edm.DateTime it reads (each entity's Timestamp, and a job row holds up to seven
more) into a datetime with `strptime`, which takes about 13 microseconds (21 for a value without a fraction: a
first format fails with an exception before the second one fits) and takes `_strptime`'s module-wide lock, so the
threads that read side by side queue on it. At 100 executions a second, with several such values per row read,
it was the largest single cost a profile of the host found. `datetime.fromisoformat` reads the same text in about
0.2 microseconds.

The SDK offers no decoder option for reads (12.7: entities go through `_deserialize._convert_to_entity`), so
`install()` replaces its private converter in the two places that hold it: the module's function (Timestamp and
`deserialize_iso`) and its conversion table (typed properties). Only the wire's own shape is read the fast way
(`YYYY-MM-DDTHH:MM:SS[.fraction]Z`); anything else goes to the SDK's converter, so what it accepts, refuses or
returns is unchanged: the same `TablesEntityDatetime` in UTC, a fraction past microseconds cut as the SDK cuts it,
its service text kept. tests/store/test_entity_datetimes.py compares both over generated values and checks the SDK
reads through this converter once installed. A release of the SDK that moves these names makes `install()` raise
at start-up rather than silently run slow.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from azure.data.tables import EdmType
from azure.data.tables import _deserialize as sdk

_WIRE_SHAPE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
_installed = threading.Lock()

sdk_converter: Callable[[str], datetime] = sdk._from_entity_datetime


def from_entity_datetime(value: str) -> datetime:
    """What the SDK's converter returns for `value`, without `strptime` for the service's own shape."""
    if not _WIRE_SHAPE.fullmatch(value):
        return sdk_converter(value)
    # fromisoformat reads "Z" as UTC and keeps the first six digits of a longer fraction, as the SDK's cut does.
    parsed: Any = sdk.TablesEntityDatetime.fromisoformat(value)
    parsed._service_value = value
    return parsed


def install() -> None:
    """Make the SDK read Edm.DateTime values with `from_entity_datetime` (idempotent)."""
    with _installed:
        conversions = sdk._ENTITY_TO_PYTHON_CONVERSIONS
        if conversions[EdmType.DATETIME] not in (sdk_converter, from_entity_datetime):
            raise RuntimeError("azure-data-tables reads Edm.DateTime through a converter this module does not know")
        conversions[EdmType.DATETIME] = from_entity_datetime
        sdk._from_entity_datetime = from_entity_datetime
