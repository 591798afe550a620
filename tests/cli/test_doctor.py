"""`scheduler doctor` against the real function_app.py under the local host (entra mode, with the local token
issuer): a healthy host, a broken one (dispatcher stopped for two and a half intervals, an occurrence long
overdue, a poisoned message, a job past its expectation, no credentials), an open one (SCHEDULER_AUTH=none)
with a job past its expectation of success, and an endpoint nobody listens on."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from devhost.azurite import Azurite, free_port
from shared.dispatcher import Dispatcher
from shared.keys import JobKey
from shared.model.versions import PREVIEW
from shared.runtime import Runtime
from shared.settings import Settings
from tests.cli.conftest import Cli
from tests.executor.peers.servers import Server, serve
from tests.support.clock import ManualClock
from tests.support.identity import LocalIssuer, local_issuer, new_id
from tests.support.local_host import local_host
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

OWNER = new_id()


@pytest.fixture(scope="module")
def issuer() -> Iterator[LocalIssuer]:
    with local_issuer() as running:
        yield running


def _runtime(azurite: Azurite, prefix: str, clock: ManualClock | None = None) -> Runtime:
    """The hosted app's own tables and queues, for arranging what the doctor should find."""
    return Runtime.create(
        Settings.from_environment({"AzureWebJobsStorage": azurite.connection_string, "SCHEDULER_TABLE_PREFIX": prefix}),
        clock,
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
        earlier = _runtime(azurite, prefix, ManualClock(datetime.now(UTC) - timedelta(minutes=10)))
        make_collection(earlier)
        quiet = {
            "startTime": (datetime.now(UTC) + timedelta(days=1)).isoformat(),
            "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
        }
        answer = call(
            earlier,
            "Jobs_CreateOrUpdate",
            "PUT",
            "quiet",
            {"properties": quiet | {"expectSuccessWithin": "PT5M"}},
            query={"api-version": PREVIEW},
        )
        assert answer.status == 201, answer.body  # created ten minutes ago, never succeeded since
        Dispatcher(rt.store, ManualClock(datetime.now(UTC) - timedelta(seconds=150))).fan_out()  # then it stopped
        rt.store.due.add(JobKey("sub-1", "rg-1", "jc1", "lost"), datetime.now(UTC) - timedelta(minutes=10), 0)
        rt.store.queue.poison("not an occurrence")
        try:
            yield base
        finally:  # the host's queue names are shared by every local host of the session
            rt.store.queue.poison_client.clear_messages()


@pytest.fixture(scope="module")
def open_host(azurite: Azurite) -> Iterator[tuple[str, str]]:
    """An open API whose timer is off: the test's own ticks, on its hand-moved clock, are the only ones."""
    prefix = f"d{uuid.uuid4().hex[:10]}"
    settings = {"SCHEDULER_TABLE_PREFIX": prefix, "SCHEDULER_AUTH": "none", "AzureWebJobs.dispatcher.Disabled": "true"}
    with local_host(azurite, **settings) as base:
        yield base, prefix


@pytest.fixture
def target() -> Iterator[Server]:
    """Answers 500 under /fail, 200 elsewhere."""
    server = serve(lambda hit: (500 if hit.path.startswith("/fail") else 200, {}, b""))
    yield server
    server.close()


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
        "silence": "warn",
    }
    assert "the dispatcher last ticked 15" in result.stdout and "AzureWebJobs.dispatcher.Disabled" in result.stdout
    assert "1 occurrence(s) overdue, the oldest by 6" in result.stdout
    assert "--functions-key" in result.stdout and "3 problem(s), 2 warning(s)" in result.stdout
    # The API is closed (entra): the anonymous health answer counts the silent job and names none.
    assert "1 job(s) have not succeeded within their expectation" in result.stdout and "quiet" not in result.stdout
    assert "the scheduler.job.silence metric" in result.stdout

    document = json.loads(Cli(broken, "sub-1")("doctor", "-o", "json").stdout)
    assert document["healthy"] is False
    assert [c["name"] for c in document["checks"] if c["status"] == "FAIL"] == ["auth", "heartbeat", "backlog"]
    assert all(c["todo"] for c in document["checks"] if c["status"] != "ok")


def test_an_endpoint_nobody_answers_is_unreachable() -> None:
    result = Cli(f"http://127.0.0.1:{free_port()}/api")("doctor")
    assert result.exit_code == 3
    assert _lines(result.stdout) == {"reachable": "FAIL"} and "make run" in result.stdout


def _open_runtime(azurite: Azurite, prefix: str, clock: ManualClock) -> Runtime:
    """The open host's tables, with queues of the test's own: the jobs it runs, it runs here on `clock`."""
    suffix = uuid.uuid4().hex[:8]
    environment = {
        "AzureWebJobsStorage": azurite.connection_string,
        "SCHEDULER_TABLE_PREFIX": prefix,
        "SCHEDULER_PRIVATE_TARGETS": "loopback",
    }
    settings = Settings.from_environment(environment)
    return Runtime.create(
        dataclasses.replace(settings, occurrence_queue=f"occ-{suffix}", dispatch_queue=f"dsp-{suffix}"), clock
    )


def _run_now(rt: Runtime, target: Server, *names: str) -> None:
    before = len(target.hits)
    for name in names:
        assert call(rt, "Jobs_Run", "POST", name).status == 200
    drain(rt, 30, until=lambda: len(target.hits) >= before + len(names))
    assert len(target.hits) == before + len(names)


def test_a_job_past_its_expectation_is_named_once_it_passes_and_not_before(
    open_host: tuple[str, str], azurite: Azurite, target: Server
) -> None:
    base, prefix = open_host
    now = datetime.now(UTC).replace(microsecond=0)
    clock = ManualClock(now - timedelta(seconds=150))
    rt = _open_runtime(azurite, prefix, clock)
    make_collection(rt)
    for name, path in (("failing", "fail"), ("succeeding", "ok")):
        action = {"type": "Http", "request": {"uri": f"{target.url}/{path}", "method": "POST", "body": "x"}}
        properties = {
            "startTime": (now + timedelta(days=1)).isoformat(),
            "action": action | {"retryPolicy": {"retryType": "None"}},
            "expectSuccessWithin": "PT2M",
        }
        answer = call(
            rt, "Jobs_CreateOrUpdate", "PUT", name, {"properties": properties}, query={"api-version": PREVIEW}
        )
        assert answer.status == 201, answer.body
    _run_now(rt, target, "failing", "succeeding")

    clock.advance(timedelta(seconds=105))  # 105 s without a success: its 2 minutes have not passed
    _run_now(rt, target, "failing", "succeeding")
    rt.dispatcher.fan_out()
    before = Cli(base, SUB)("doctor")
    assert _lines(before.stdout)["silence"] == "ok", before.stdout
    assert "jobs/failing" not in before.stdout

    clock.advance(timedelta(seconds=45))  # 150 s
    _run_now(rt, target, "failing", "succeeding")
    rt.dispatcher.fan_out()
    after = Cli(base, SUB)("doctor")
    assert _lines(after.stdout)["silence"] == "warn", after.stdout
    failing = JobKey(SUB, RG, JC, "failing").resource_id
    assert "1 job(s) have not succeeded within their expectation (expectSuccessWithin)" in after.stdout
    assert f"{failing}: expects a success every PT2M; never succeeded since it was created" in after.stdout
    assert "jobs/succeeding" not in after.stdout
    assert "scheduler jobs history" in after.stdout  # what to do
    assert after.exit_code == 0  # a warning: the service works, one of its jobs does not succeed

    document = json.loads(Cli(base, SUB)("doctor", "-o", "json").stdout)
    (silence,) = [c for c in document["checks"] if c["name"] == "silence"]
    assert silence["status"] == "warn" and len(silence["details"]) == 1 and silence["details"][0].startswith(failing)
