"""host.json options, local.settings.json handling, connection resolution and timer schedules."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from devhost.hostconfig import HostConfig, QueueOptions, parse_timespan
from devhost.settings import (
    SettingsError,
    apply_settings,
    read_local_settings,
    resolve_references,
    storage_connection,
)
from devhost.timers import CronSchedule, parse_schedule


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("00:00:02", 2.0), ("00:01", 60.0), ("01:02:03.5", 3723.5), ("1.00:00:01", 86401.0), ("2", 172800.0)],
)
def test_timespan(text: str, seconds: float) -> None:
    assert parse_timespan(text) == seconds


@pytest.mark.parametrize("bad", ["2s", "", "00:00:xx", 2000])
def test_timespan_rejects_other_forms(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_timespan(bad)  # type: ignore[arg-type]


def test_host_json_defaults(tmp_path: Path) -> None:
    assert HostConfig.load(tmp_path) == HostConfig("api", QueueOptions(16, 8, 60.0, 5, 0.0, "base64"))


def test_host_json_values_case_insensitive(tmp_path: Path) -> None:
    (tmp_path / "host.json").write_text(
        json.dumps(
            {
                "version": "2.0",
                "extensions": {
                    "HTTP": {"routePrefix": "/v1/"},
                    "queues": {
                        "BatchSize": 4,
                        "maxPollingInterval": "00:00:02",
                        "maxDequeueCount": 3,
                        "visibilityTimeout": "00:00:05",
                        "messageEncoding": "None",
                    },
                },
            }
        )
    )
    config = HostConfig.load(tmp_path)
    assert config.route_prefix == "v1"
    assert config.queues == QueueOptions(4, 2, 2.0, 3, 5.0, "none")


def test_host_json_empty_route_prefix_and_explicit_threshold() -> None:
    config = HostConfig.from_dict({"extensions": {"http": {"routePrefix": ""}, "queues": {"newBatchThreshold": 0}}})
    assert (config.route_prefix, config.queues.new_batch_threshold) == ("", 0)


@pytest.mark.parametrize("queues", [{"batchSize": 33}, {"messageEncoding": "utf8"}, {"maxDequeueCount": 0}])
def test_host_json_invalid_queue_options(queues: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        HostConfig.from_dict({"extensions": {"queues": queues}})


def test_local_settings_created_from_sample_and_environment_wins(tmp_path: Path) -> None:
    sample = {
        "IsEncrypted": False,
        "Values": {"A": "from-file", "B": "b", "FLAG": True, "N": 3},
        "Host": {"LocalHttpPort": 7077},
    }
    (tmp_path / "local.settings.sample.json").write_text(json.dumps(sample))
    settings = read_local_settings(tmp_path)
    assert (tmp_path / "local.settings.json").exists()
    assert settings.values == {"A": "from-file", "B": "b", "FLAG": "true", "N": "3"}
    assert settings.local_http_port == 7077
    environ = {"A": "from-env"}
    assert apply_settings(settings.values, environ) == ["B", "FLAG", "N"]
    assert environ["A"] == "from-env"


def test_local_settings_sample_read_without_creating(tmp_path: Path) -> None:
    (tmp_path / "local.settings.sample.json").write_text(json.dumps({"Values": {"A": "1"}}))
    assert read_local_settings(tmp_path, create=False).values == {"A": "1"}
    assert not (tmp_path / "local.settings.json").exists()
    assert read_local_settings(tmp_path / "missing").values == {}


def test_storage_connection_lookup_rules() -> None:
    env = {"AzureWebJobsStorage": "main", "Other": "other", "AzureWebJobsPrefixed": "prefixed", "Prefixed": "plain"}
    assert storage_connection("AzureWebJobsStorage", env) == "main"
    assert storage_connection("", env) == "main"
    assert storage_connection(None, env) == "main"
    assert storage_connection("Storage", env) == "main"
    assert storage_connection("Other", env) == "other"
    assert storage_connection("Prefixed", env) == "prefixed"
    with pytest.raises(SettingsError, match="Missing"):
        storage_connection("Missing", env)


def test_setting_references() -> None:
    assert resolve_references("jobs-%Env%-in", {"Env": "dev"}) == "jobs-dev-in"
    with pytest.raises(SettingsError):
        resolve_references("%Nope%", {})


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_ncrontab_six_fields_seconds_first() -> None:
    schedule = parse_schedule("*/15 * * * * *")
    assert isinstance(schedule, CronSchedule)
    assert schedule.next_after(at("2024-01-01T00:00:00")) == at("2024-01-01T00:00:15")
    assert schedule.next_after(at("2024-01-01T00:00:14.999")) == at("2024-01-01T00:00:15")
    assert parse_schedule("0 30 9 * * 1-5").next_after(at("2024-01-06T00:00:00")) == at("2024-01-08T09:30:00")


def test_five_field_cron_fires_at_second_zero() -> None:
    assert parse_schedule("*/5 * * * *").next_after(at("2024-01-01T00:01:30")) == at("2024-01-01T00:05:00")


def test_day_of_month_and_day_of_week_combine_with_and() -> None:
    # NCrontab requires both: the 13th that is a Friday (cron's OR would fire on every Friday and every 13th).
    assert parse_schedule("0 0 0 13 * 5").next_after(at("2024-01-01T00:00:00")) == at("2024-09-13T00:00:00")


def test_schedule_references(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SampleSchedule", "0 0 * * * *")
    assert parse_schedule("%SampleSchedule%") == CronSchedule("0 0 * * * *")


@pytest.mark.parametrize("bad", ["* * * *", "61 * * * * *", "every minute", "00:00:30"])
def test_invalid_schedules(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_schedule(bad)
