"""Edm.DateTime values read the fast way answer exactly as the SDK's own converter (shared/store/entity_datetimes.py),
and the SDK reads a real Azurite's entities through it once the table clients are built."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from azure.data.tables import EdmType
from azure.data.tables import _deserialize as sdk
from hypothesis import given
from hypothesis import strategies as st

from devhost.azurite import Azurite
from shared.settings import StorageSettings
from shared.store import entity_datetimes
from shared.store.clients import table_service
from shared.store.entity_datetimes import from_entity_datetime, sdk_converter

compared: list[str] = []


def same_reading(text: str) -> None:
    """Both converters accept `text` or both refuse it; accepted, the values, types, zones and service text agree."""
    try:
        expected = sdk_converter(text)
    except ValueError:
        with pytest.raises(ValueError):
            from_entity_datetime(text)
        return
    got = from_entity_datetime(text)
    assert (got, type(got), got.tzinfo) == (expected, type(expected), expected.tzinfo)
    assert got.tables_service_value == expected.tables_service_value == text  # type: ignore[attr-defined]
    compared.append(text)


@given(
    st.datetimes(min_value=datetime(1601, 1, 1), max_value=datetime(9999, 12, 31)),
    st.integers(min_value=0, max_value=7),
    st.integers(min_value=0, max_value=9_999_999),
)
def test_the_wire_shape_reads_as_the_sdk_reads_it(instant: datetime, digits: int, ticks: int) -> None:
    """Every fraction length the service and Azurite send (none, 1 to 7 digits), over the range Edm.DateTime holds."""
    fraction = f".{ticks:07d}"[: digits + 1] if digits else ""
    text = instant.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"
    before = len(compared)
    same_reading(text)
    assert len(compared) == before + 1, f"the SDK refused {text!r}: nothing was compared"


@pytest.mark.parametrize(
    "text",
    [
        "2026-12-01T00:41:00",  # no zone: the SDK refuses it, so must this
        "2026-12-01T00:41Z",  # no seconds: fromisoformat would take it, the SDK does not
        "2026-12-01 00:41:00Z",
        "2026-12-01T00:41:00.Z",
        "2026-12-01T00:41:00+00:00",
        "2026-13-01T00:41:00Z",
        "2026-12-01T00:41:00.5z",
        "",
    ],
)
def test_other_shapes_answer_as_the_sdk_answers(text: str) -> None:
    same_reading(text)


def test_the_sdk_reads_entities_through_it(azurite: Azurite) -> None:
    """Built as the store builds them, table clients read a row's Timestamp and typed datetimes through the fast
    converter, and the values read back equal what was written."""
    service = table_service(StorageSettings(connection_string=azurite.connection_string))
    assert sdk._from_entity_datetime is from_entity_datetime
    assert sdk._ENTITY_TO_PYTHON_CONVERSIONS[EdmType.DATETIME] is from_entity_datetime
    table = service.create_table(f"t{uuid.uuid4().hex[:10]}")
    written = datetime(2026, 12, 1, 0, 41, 0, 123456, tzinfo=UTC)
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "When": written, "Whole": written.replace(microsecond=0)})
    before = datetime.now(UTC) - timedelta(minutes=5)
    for row in (table.get_entity("p", "r"), *table.query_entities("PartitionKey eq 'p'")):
        assert (row["When"], row["Whole"]) == (written, written.replace(microsecond=0))
        assert row.metadata["timestamp"] > before
        assert type(row["When"]) is sdk.TablesEntityDatetime


def test_install_refuses_a_converter_it_does_not_know() -> None:
    """A release of the SDK that reads datetimes some other way is noticed at start-up, not run slow or wrong."""
    conversions = sdk._ENTITY_TO_PYTHON_CONVERSIONS
    kept = conversions[EdmType.DATETIME]
    conversions[EdmType.DATETIME] = str
    try:
        with pytest.raises(RuntimeError):
            entity_datetimes.install()
    finally:
        conversions[EdmType.DATETIME] = kept
