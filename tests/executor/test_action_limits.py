"""Actions in flight: as many as the process's setting allows, not as many as a thread pool has threads; and
per target host, so a host that hangs holds only its own slots while the actions of other hosts go on. The
peer holds requests until released (tests/executor/peers/gate.py): the counts are exact, not timed."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest

from shared.actions import ActionRunner
from shared.actions.base import ActionResult
from shared.actions.limits import ActionLimits, host_of
from shared.model import JobErrorAction
from shared.settings import ConfigurationError, Settings
from tests.executor.peers.gate import Gate
from tests.executor.peers.servers import Server, ok, serve
from tests.executor.support import context, http


def _action(url: str) -> JobErrorAction:
    return JobErrorAction.model_validate(http(url))


def _run_all(runner: ActionRunner, urls: list[str]) -> list[ActionResult]:
    async def everything() -> list[ActionResult]:
        return list(await asyncio.gather(*(runner.run_async(_action(url), context()) for url in urls)))

    return asyncio.run(everything())


@pytest.fixture
def healthy() -> Iterator[Server]:
    server = serve(ok)
    yield server
    server.close()


def test_hundreds_of_actions_wait_at_once_on_a_few_threads(settings: Settings) -> None:
    gate = Gate(round_size=300)  # answers once 300 requests are held at the same time
    try:
        before = threading.active_count()
        results = _run_all(ActionRunner.from_settings(settings), [gate.url] * 300)
    finally:
        gate.close()
    assert all(r.succeeded for r in results), {r.message for r in results if not r.succeeded}
    assert gate.most_at_once == 300
    # The gate itself holds a thread per connection; the client side added hardly any (not one per action).
    assert gate.threads_at_full_round - before - 300 < 40, (before, gate.threads_at_full_round)


def test_the_in_flight_setting_bounds_the_actions_of_a_process(settings: Settings) -> None:
    gate = Gate(round_size=20)
    runner = ActionRunner.from_settings(replace(settings, actions_in_flight=20, actions_per_host=20))
    try:
        results = _run_all(runner, [gate.url] * 60)
    finally:
        gate.close()
    assert all(r.succeeded for r in results)
    assert gate.most_at_once == 20 and gate.answered == 60  # three full rounds, never a 21st at once


def test_a_hanging_host_holds_its_own_slots_only(settings: Settings, healthy: Server) -> None:
    hanging = Gate()  # answers nothing until released
    runner = ActionRunner.from_settings(replace(settings, actions_in_flight=10, actions_per_host=5))

    async def scenario() -> tuple[list[ActionResult], list[ActionResult], int]:
        stuck = [asyncio.ensure_future(runner.run_async(_action(hanging.url), context())) for _ in range(8)]
        fine = await asyncio.wait_for(
            asyncio.gather(*(runner.run_async(_action(f"{healthy.url}/n{n}"), context()) for n in range(30))),
            timeout=60,
        )
        held_meanwhile = hanging.held
        hanging.release()
        return list(fine), list(await asyncio.gather(*stuck)), held_meanwhile

    try:
        fine, stuck, held_meanwhile = asyncio.run(scenario())
    finally:
        hanging.close()
    assert all(r.succeeded for r in fine) and len(healthy.hits) == 30
    assert held_meanwhile == 5 and hanging.most_at_once == 5  # the other 3 waited for the host, not a thread
    assert all(r.succeeded for r in stuck)


def test_hosts_are_told_apart_by_scheme_name_and_port() -> None:
    def host(uri: str) -> str:
        return host_of(_action(uri))

    assert host("http://Hooks.Example.com/a") == host("http://hooks.example.com:80/b") == "http://hooks.example.com:80"
    assert host("https://hooks.example.com/a") == "https://hooks.example.com:443"
    assert host("http://hooks.example.com:8080/") != host("http://hooks.example.com/")
    queue = JobErrorAction.model_validate(
        {
            "type": "StorageQueue",
            "queueMessage": {"storageAccount": "acct1", "queueName": "q", "sasToken": "sig=x", "message": "m"},
        }
    )
    assert host_of(queue) == "storage://acct1"


def test_the_settings_default_to_six_thousand_in_flight_and_three_thousand_per_host() -> None:
    env = {"AzureWebJobsStorage": "UseDevelopmentStorage=true"}
    settings = Settings.from_environment(env)
    assert (settings.actions_in_flight, settings.actions_per_host) == (6000, 3000)
    limits = ActionLimits.from_settings(
        Settings.from_environment({**env, "SCHEDULER_ACTIONS_IN_FLIGHT": "5000", "SCHEDULER_ACTIONS_PER_HOST": "9000"})
    )
    assert (limits.in_flight, limits.per_host) == (5000, 5000)  # a host never gets more than the process
    for bad in ("0", "-3", "lots", "100001"):
        with pytest.raises(ConfigurationError, match="SCHEDULER_ACTIONS_IN_FLIGHT"):
            Settings.from_environment({**env, "SCHEDULER_ACTIONS_IN_FLIGHT": bad})
