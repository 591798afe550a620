"""`scheduler doctor` against the real function_app.py under the local host (entra mode, with the local token
issuer): a healthy host, a broken one (dispatcher stopped for two and a half intervals, an occurrence long
overdue, a poisoned message, no credentials), and an endpoint nobody listens on."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from devhost.azurite import Azurite, free_port
from shared.dispatcher import Dispatcher
from shared.keys import JobKey
from shared.runtime import Runtime
from shared.settings import Settings
from tests.cli.conftest import Cli
from tests.support.clock import ManualClock
from tests.support.identity import LocalIssuer, local_issuer, new_id
from tests.support.local_host import local_host

OWNER = new_id()


@pytest.fixture(scope="module")
def issuer() -> Iterator[LocalIssuer]:
    with local_issuer() as running:
        yield running


def _runtime(azurite: Azurite, prefix: str) -> Runtime:
    """The hosted app's own tables and queues, for arranging what the doctor should find."""
    return Runtime.create(
        Settings.from_environment({"AzureWebJobsStorage": azurite.connection_string, "SCHEDULER_TABLE_PREFIX": prefix})
    )


@pytest.fixture(scope="module")
def healthy(azurite: Azurite, issuer: LocalIssuer) -> Iterator[str]:
    prefix = f"d{uuid.uuid4().hex[:10]}"
    with local_host(azurite, SCHEDULER_TABLE_PREFIX=prefix, **issuer.environment(OWNER)) as base:
        _runtime(azurite, prefix).dispatcher.fan_out()  # a heartbeat now (the host's timer ticks each minute too)
        yield base


@pytest.fixture(scope="module")
def broken(azurite: Azurite, issuer: LocalIssuer) -> Iterator[str]:
    prefix = f"d{uuid.uuid4().hex[:10]}"
    settings = {
        "SCHEDULER_TABLE_PREFIX": prefix,
        "AzureWebJobs.dispatcher.Disabled": "true",
        **issuer.environment(OWNER),
    }
    with local_host(azurite, **settings) as base:
        rt = _runtime(azurite, prefix)
        Dispatcher(rt.store, ManualClock(datetime.now(UTC) - timedelta(seconds=150))).fan_out()  # then it stopped
        rt.store.due.add(JobKey("sub-1", "rg-1", "jc1", "lost"), datetime.now(UTC) - timedelta(minutes=10), 0)
        rt.store.queue.poison("not an occurrence")
        try:
            yield base
        finally:  # the host's queue names are shared by every local host of the session
            rt.store.queue.poison_client.clear_messages()


def _lines(stdout: str) -> dict[str, str]:
    """check name -> its status, from the table output."""
    found = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("ok", "warn", "FAIL"):
            found[parts[1]] = parts[0]
    return found


def test_a_healthy_host_passes(healthy: str, issuer: LocalIssuer) -> None:
    result = Cli(healthy, "sub-1")("--token", issuer.token(OWNER), "doctor")
    assert result.exit_code == 0, result.stdout
    statuses = _lines(result.stdout)
    assert {name: statuses[name] for name in ("reachable", "storage", "auth", "heartbeat", "backlog", "clock")} == {
        "reachable": "ok",
        "storage": "ok",
        "auth": "ok",
        "heartbeat": "ok",
        "backlog": "ok",
        "clock": "ok",
    }
    assert "poison" in statuses


def test_a_signed_in_caller_without_a_role_is_told_to_get_one(healthy: str, issuer: LocalIssuer) -> None:
    result = Cli(healthy, "sub-1")("--token", issuer.token(new_id()), "doctor")
    assert _lines(result.stdout)["auth"] == "warn" and "role assignment" in result.stdout


def test_a_broken_host_says_what_is_wrong_and_what_to_do(broken: str) -> None:
    result = Cli(broken, "sub-1")("doctor")  # no credentials
    assert result.exit_code == 1, result.stdout
    statuses = _lines(result.stdout)
    assert statuses == {
        "reachable": "ok",
        "storage": "ok",
        "auth": "FAIL",
        "heartbeat": "FAIL",
        "backlog": "FAIL",
        "poison": "warn",
        "clock": "ok",
    }
    assert "the dispatcher last ticked 15" in result.stdout and "AzureWebJobs.dispatcher.Disabled" in result.stdout
    assert "1 occurrence(s) overdue, the oldest by 6" in result.stdout
    assert "--functions-key" in result.stdout and "3 problem(s), 1 warning(s)" in result.stdout

    document = json.loads(Cli(broken, "sub-1")("doctor", "-o", "json").stdout)
    assert document["healthy"] is False
    assert [c["name"] for c in document["checks"] if c["status"] == "FAIL"] == ["auth", "heartbeat", "backlog"]
    assert all(c["todo"] for c in document["checks"] if c["status"] != "ok")


def test_an_endpoint_nobody_answers_is_unreachable() -> None:
    result = Cli(f"http://127.0.0.1:{free_port()}/api")("doctor")
    assert result.exit_code == 3
    assert _lines(result.stdout) == {"reachable": "FAIL"} and "make run" in result.stdout
