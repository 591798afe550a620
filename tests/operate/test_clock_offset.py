"""SCHEDULER_CLOCK_OFFSET_SECONDS (shared/settings/clock_offset.py): the local host's clock offset is read as a number
of seconds, carried by Settings into the runtime's clock (an OffsetClock), and refused wherever the Functions host
would not apply it (any storage but Azurite's development account) or when malformed. The process-level half (the
host's timers and API follow it) is tests/devhost/test_clock_offset.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.clock import OffsetClock, SystemClock, clock_with_offset
from shared.runtime import Runtime
from shared.settings import ConfigurationError, Settings, StorageSettings
from shared.settings.clock_offset import CLOCK_OFFSET_SETTING, clock_offset
from shared.settings.storage import DEVELOPMENT_STORAGE
from shared.store.memory import MemoryStorage

AZURITE = {"AzureWebJobsStorage": DEVELOPMENT_STORAGE}
ACCOUNT = {"AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5"}
IDENTITY = {"AzureWebJobsStorage__accountName": "acct", "AzureWebJobsStorage__credential": "managedidentity"}


@pytest.mark.parametrize(
    ("text", "seconds"), [(None, 0.0), ("", 0.0), (" 55 ", 55.0), ("12.345", 12.345), ("-3600", -3600.0)]
)
def test_the_offset_is_a_signed_number_of_seconds_and_none_when_unset(text: str | None, seconds: float) -> None:
    env = AZURITE if text is None else {**AZURITE, CLOCK_OFFSET_SETTING: text}
    assert clock_offset(env) == timedelta(seconds=seconds)
    assert Settings.from_environment(env).clock_offset == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["soon", "nan", "inf", "-inf", "1e12", "5s"])
def test_a_malformed_offset_is_refused_naming_the_setting(text: str) -> None:
    with pytest.raises(ConfigurationError, match=CLOCK_OFFSET_SETTING):
        Settings.from_environment({**AZURITE, CLOCK_OFFSET_SETTING: text})


@pytest.mark.parametrize("storage", [ACCOUNT, IDENTITY], ids=["connection string", "managed identity"])
def test_an_offset_on_storage_other_than_azurite_is_refused_as_local_only(storage: dict[str, str]) -> None:
    """The Functions host's timers would not follow it: refused, never ignored."""
    with pytest.raises(ConfigurationError, match=f"{CLOCK_OFFSET_SETTING} is for the local host only"):
        Settings.from_environment({**storage, CLOCK_OFFSET_SETTING: "30"})
    assert Settings.from_environment({**storage, CLOCK_OFFSET_SETTING: "0"}).clock_offset == timedelta(0)


def test_the_offset_clock_reads_real_time_plus_its_offset() -> None:
    ahead = OffsetClock(timedelta(hours=1))
    before = datetime.now(UTC)
    read = ahead.now()
    after = datetime.now(UTC)
    assert before + timedelta(hours=1) <= read <= after + timedelta(hours=1)
    assert read.tzinfo is UTC
    assert type(clock_with_offset(timedelta(0))) is SystemClock
    assert clock_with_offset(timedelta(seconds=-5)).now() < datetime.now(UTC)


def test_a_runtime_built_from_settings_with_an_offset_reckons_now_on_it() -> None:
    settings = Settings(storage=StorageSettings(connection_string=DEVELOPMENT_STORAGE), clock_offset=timedelta(days=2))
    rt = Runtime.create(settings, storage=MemoryStorage(SystemClock()))
    try:
        assert isinstance(rt.clock, OffsetClock)
        assert abs(rt.clock.now() - datetime.now(UTC) - timedelta(days=2)) < timedelta(seconds=1)
        assert rt.started is not None and rt.started > datetime.now(UTC) + timedelta(days=1)
    finally:
        rt.close()
