"""A collection's cascade survives its host dying mid-way: the host's whole process group killed (SIGKILL) while
a cascade task runs, and started again at once.

The real app runs under `python -m devhost` on its own Azurite (tests/support/crash.py). The dead host's task stays
hidden for the host's ten-minute receive visibility; the task's watchdog (shared/lifecycle/cascade.py,
shared/leases.py) brings its page back `task_watchdog_after` after the death, and the pages that follow finish the
cascade within seconds of the restart. Meanwhile the jobs' stored state is stale (still Enabled), and nothing of
the collection runs: the executor reads the collection's state at each occurrence's second.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import requests

from devhost.azurite import Azurite
from shared.keys import CollectionKey
from shared.lifecycle.cascade import PAGE, CascadeTask
from shared.model import JobState
from shared.settings import Settings
from shared.store import Store
from shared.timings import Timings
from tests.support.crash import COLLECTION, CrashingHost, Target, V, crash_environment, create_one_shot_jobs

KEY = CollectionKey("s1", "rg", "crash")
BULK = 3 * PAGE  # jobs that never fire during the test: the cascade takes several pages
PROBES = 20  # one-shot jobs due a second apart from just after the disable: they fall while the jobs say Enabled
# From the host being back: the watchdog's visibility (after the death, most of it spent while the host restarts),
# then the pages; room for a busy machine.
BOUND = Timings().task_watchdog_after.total_seconds() + 15
GATE = timedelta(seconds=1.5)  # the executor's collection read answers for `collection_fresh` (1 s): and a margin


def put_jobs(url: str, bodies: dict[str, dict[str, Any]]) -> None:
    def put(name: str) -> None:
        answer = requests.put(f"{url}/{COLLECTION}/jobs/{name}", params=V, timeout=10, json=bodies[name])
        assert answer.status_code == 201, answer.text

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, bodies))


def http_job(target: Target, name: str, start: datetime, recurrence: dict[str, Any] | None = None) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "startTime": start.isoformat(),
        "action": {
            "type": "Http",
            "request": {"uri": f"{target.url}/{name}", "method": "POST", "body": "x"},
            "retryPolicy": {"retryType": "None"},
        },
    }
    return {"properties": properties | ({"recurrence": recurrence} if recurrence else {})}


def states(store: Store) -> dict[str, JobState]:
    return {job.key.job: job.state for job in store.jobs.all(KEY)}


def test_a_disable_cascade_killed_mid_way_is_finished_within_seconds_of_the_restart_and_nothing_runs_meanwhile(
    azurite_of_its_own: Azurite, tmp_path: Path
) -> None:
    env = crash_environment(azurite_of_its_own, "crashcascade")
    target = Target()
    host = CrashingHost(env, tmp_path / "host.log")
    host.start()
    try:
        create_one_shot_jobs(host.url, target, {})  # the collection (P20Premium), no job yet
        tomorrow = datetime.now(UTC).replace(microsecond=0) + timedelta(days=1)
        put_jobs(
            host.url,
            {f"bulk{i:03d}": http_job(target, f"bulk{i:03d}", tomorrow, {"frequency": "Hour"}) for i in range(BULK)},
        )
        first = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=4)
        due = {f"probe{i:02d}": first + timedelta(seconds=i) for i in range(PROBES)}
        put_jobs(host.url, {name: http_job(target, name, at) for name, at in due.items()})
        store = Store.from_settings(Settings.from_environment(env))
        offset = host.log.stat().st_size
        answer = requests.post(f"{host.url}/{COLLECTION}/disable", params=V, timeout=10)
        assert answer.status_code == 200, answer.text
        disabled_at = datetime.now(UTC)
        host.wait_for_log("collection crash: a page of its Disabled cascade", offset, within=30)
        host.kill()
        left = [name for name, state in states(store).items() if state == JobState.ENABLED]
        assert len(left) > PAGE, "the cascade was not cut short"  # its first page had just begun
        visible = store.dispatch.client.peek_messages(max_messages=32)
        assert not [m for m in visible if CascadeTask.from_json(m.content)], "the task was not received"
        back = host.start()
        while time.monotonic() - back < BOUND + 10 and set(states(store).values()) != {JobState.DISABLED}:
            time.sleep(0.5)
        finished, finished_at = time.monotonic() - back, datetime.now(UTC)
        assert set(states(store).values()) == {JobState.DISABLED}, states(store)
        assert len(states(store)) == BULK + PROBES
        assert finished <= BOUND, finished
        # Every probe due after the disable took hold had its second, and a run would have arrived, by now.
        time.sleep(max((max(due.values()) - datetime.now(UTC)).total_seconds(), 0) + 3)
        stale = [name for name, at in due.items() if disabled_at + GATE < at < finished_at]
        assert stale, "no probe fell due while the jobs' stored state was stale: the test proves nothing"
        ran = sorted(name for name in target.fired() if name not in due or due[name] > disabled_at + GATE)
        assert ran == [], ran
        print(
            f"the cascade was finished {finished:.1f} s after the restart; {len(stale)} probe(s) fell due while "
            "their jobs still said Enabled, none ran"
        )
    finally:
        host.stop()
        target.close()
