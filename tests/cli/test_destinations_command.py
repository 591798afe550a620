"""`scheduler destinations` (scheduler_cli/destinations.py) and `scheduler doctor`'s `destinations` check
(scheduler_cli/doctor_destinations.py) against the real function_app.py under the local host, whose destination rows
the test writes through the store's interface (`store.destinations.write`) in the host's own tables: the table
shows each destination's circuit, failures, next probe, budget and hold; `-o json` is the API's answer; the doctor
warns of each Open or HalfOpen circuit and each push-back with until when, and passes when there is none."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from devhost.azurite import Azurite
from shared.jobstate.pushback import DestinationState
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.destinations import DestinationRow
from tests.cli.conftest import Cli
from tests.support.local_host import local_host

SUB = "destinations-sub"


@pytest.fixture(scope="module")
def host(azurite: Azurite) -> Iterator[tuple[str, Runtime]]:
    """The host's API, and a runtime over its tables (the destinations are the deployment's: its own prefix)."""
    prefix = f"dst{uuid.uuid4().hex[:10]}"
    with local_host(azurite, SCHEDULER_TABLE_PREFIX=prefix) as base:
        environment = {"AzureWebJobsStorage": azurite.connection_string, "SCHEDULER_TABLE_PREFIX": prefix}
        rt = Runtime.create(Settings.from_environment(environment))
        try:
            yield base, rt
        finally:
            rt.close()


@pytest.fixture
def rows(host: tuple[str, Runtime]) -> Iterator[Runtime]:
    """The host's runtime with no destination row at the start of the test."""
    rt = host[1]
    assert rt.store.destinations is not None
    rt.store.destinations.table.delete_partition("destination")
    yield rt
    rt.store.destinations.table.delete_partition("destination")


def at(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def held_back(rt: Runtime) -> tuple[datetime, datetime]:
    """An Open circuit and a push-back, both until ten minutes from now (whole seconds): (next probe, hold)."""
    now = datetime.now(UTC).replace(microsecond=0)
    probe, hold = now + timedelta(minutes=10), now + timedelta(minutes=10, seconds=5)
    assert rt.store.destinations is not None
    open_circuit = DestinationState(
        failures=5, failing_since=now - timedelta(seconds=40), failed_at=now, open_until=probe
    )
    pushed = DestinationState(rate=4.5, next_free=hold, hold_until=hold, pushed_at=now, episode_at=now, last_status=429)
    rt.store.destinations.write("127.0.0.1:8080", DestinationRow(open_circuit))
    rt.store.destinations.write("api.example.com", DestinationRow(pushed))
    return probe, hold


def _line(stdout: str, name: str) -> str:
    (found,) = [line for line in stdout.splitlines() if line.split()[:2][-1:] == [name]]
    return found


def _cells(stdout: str) -> dict[str, list[str]]:
    """The table's rows (six columns): destination -> the other cells."""
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in stdout.splitlines() if line.count("│") == 7]
    return {row[0]: row[1:] for row in rows}


def test_the_table_shows_each_destinations_circuit_budget_and_hold(host: tuple[str, Runtime], rows: Runtime) -> None:
    probe, hold = held_back(rows)
    shown = Cli(host[0], SUB)("--times-in", "UTC", "destinations")
    assert shown.exit_code == 0, shown.stderr
    table = _cells(shown.stdout)
    assert table["127.0.0.1:8080"] == ["Open", "5", f"{probe:%Y-%m-%d %H:%M:%S} UTC", "-", "-"]
    assert table["api.example.com"] == ["Closed", "0", "-", "4.5/s", f"{hold:%Y-%m-%d %H:%M:%S} UTC"]
    assert list(table) == ["127.0.0.1:8080", "api.example.com"]  # by name


def test_json_is_the_apis_answer(host: tuple[str, Runtime], rows: Runtime) -> None:
    probe, hold = held_back(rows)
    answer = json.loads(Cli(host[0], SUB)("-o", "json", "destinations").stdout)
    assert set(answer) == {"value", "asOf"}
    first, second = answer["value"]
    assert (first["destination"], first["circuit"], first["nextProbe"]) == ("127.0.0.1:8080", "Open", at(probe))
    assert (second["budget"], second["holdUntil"], second["lastPushBack"]["status"]) == (4.5, at(hold), 429)


def test_none_held_back_says_so_and_the_doctor_passes_its_check(host: tuple[str, Runtime], rows: Runtime) -> None:
    assert "No destination pushes back or fails." in Cli(host[0], SUB)("destinations").stdout
    doctor = Cli(host[0], SUB)("doctor")
    assert _line(doctor.stdout, "destinations").split()[0] == "ok", doctor.stdout


def test_the_doctor_warns_of_each_open_circuit_and_push_back_with_until_when(
    host: tuple[str, Runtime], rows: Runtime
) -> None:
    probe, hold = held_back(rows)
    doctor = Cli(host[0], SUB)("doctor")
    assert _line(doctor.stdout, "destinations").split()[:3] == ["warn", "destinations", "2"], doctor.stdout
    assert "127.0.0.1:8080: circuit Open after 5 failure(s) in a row since " in doctor.stdout
    assert f"no request goes before the next probe at {at(probe)}" in doctor.stdout
    assert "api.example.com: pushed back (HTTP 429 at " in doctor.stdout
    assert f"a budget of 4.5/s for every job together, held until {at(hold)}" in doctor.stdout
    assert "scheduler destinations" in doctor.stdout  # what to do
    document = json.loads(Cli(host[0], SUB)("doctor", "-o", "json").stdout)
    (check,) = [c for c in document["checks"] if c["name"] == "destinations"]
    assert check["status"] == "warn" and [d.split(":")[0] for d in check["details"]] == ["127.0.0.1", "api.example.com"]
