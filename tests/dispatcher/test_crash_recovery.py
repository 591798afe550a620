"""Dispatching survives a crash at any moment: the host's whole process group killed (SIGKILL) while a dispatch
task runs, or just before a minute tick, and started again at once.

The real app runs under `python -m devhost` on its own Azurite (tests/support/crash.py).

- A dispatch task killed mid-way: the task is what the minute timer sends (`store.dispatch.send`, as
  `Dispatcher.fan_out` does), for a minute no tick of the test reaches, so only the task's own recovery can
  finish it. Its queue message stays hidden for the host's 10-minute receive visibility; the task's watchdog
  (shared/leases.py) brings it back within seconds of the restart.
- A tick missed across a restart: killed 1 s before a minute tick and started after it, the host makes the
  missed tick up at start (the timer's schedule monitor, `use_monitor=True`), so the minute it would have
  dispatched is dispatched at once, not a minute later, and what the dead host held fires within seconds.

Each host runs on a clock of its own (tests/support/host_clock.py, kept across its restart): started where its
minute suits the test (clear of its tick, or seconds before it), so no test waits for the real minute. Every
instant the host sees (start times, its ticks) is reckoned on that clock.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path

from devhost.azurite import Azurite
from shared.keys import JobKey
from shared.settings import Settings
from shared.store import Store, bucket_of
from shared.store.queues import ShardTask
from tests.support.crash import CrashingHost, Target, crash_environment, create_one_shot_jobs
from tests.support.host_clock import HostClock

BOUND = 15.0  # seconds from a host being able to run it again (issue 23)
# A dispatch task works a minute ahead: what its watchdog brings back (10 s after the kill, then the dispatch
# itself) is queued long before it is due. Room for a busy machine, far inside that minute.
DISPATCHED_WITHIN = 20.0


def undispatched(store: Store, starts: dict[str, datetime]) -> list[str]:
    """The jobs whose one occurrence is not queued yet (the job not advanced past it)."""
    left = []
    for name, start in starts.items():
        job = store.jobs.get(JobKey("s1", "rg", "crash", name))
        if job is None or job.dispatched_occurrence != start:
            left.append(name)
    return left


def test_a_dispatch_task_killed_mid_way_is_finished_within_seconds_of_the_restart(
    azurite_of_its_own: Azurite, tmp_path: Path
) -> None:
    clock = HostClock.reading(second=5, within=1.5)  # serving early in its minute, far from its tick
    # One task holds the whole minute.
    env = crash_environment(azurite_of_its_own, "crashdispatch", SCHEDULER_DUE_SHARDS="1", **clock.setting())
    target = Target()
    host = CrashingHost(env, tmp_path / "host.log")
    host.start()
    try:
        # Five minutes ahead: beyond every tick's window during the test, so no tick dispatches that minute.
        minute = (clock.now() + timedelta(minutes=5)).replace(second=0, microsecond=0)
        starts = {f"job{i:03d}": minute + timedelta(seconds=i % 60) for i in range(150)}
        create_one_shot_jobs(host.url, target, starts)
        store = Store.from_settings(Settings.from_environment(env))
        now = clock.now()
        if not 3 <= now.second <= 45:  # clear of the minute tick, whose own dispatch tasks would be killed instead
            time.sleep(((3 - now.second) % 60) + 0.5)
        offset = host.log.stat().st_size
        store.dispatch.send(ShardTask(bucket_of(minute), 0))  # what the minute tick sends for that minute
        host.wait_for_log("Executing 'Functions.dispatch'", offset, within=30)
        host.kill()
        assert undispatched(store, starts), "the task finished before the kill: nothing was cut short"
        assert not list(store.dispatch.client.peek_messages()), "the task was not received"  # hidden 10 minutes
        back = host.start()
        while time.monotonic() - back < DISPATCHED_WITHIN + 10 and undispatched(store, starts):
            time.sleep(0.5)
        finished = time.monotonic() - back
        assert not undispatched(store, starts), undispatched(store, starts)[:5]
        assert finished <= DISPATCHED_WITHIN, finished
        assert store.due.entries(bucket_of(minute)) == []
        print(f"the task's minute was dispatched {finished:.1f} s after the restart")
    finally:
        host.stop()
        target.close()


def test_a_tick_missed_across_a_restart_is_made_up_at_start_and_what_the_host_held_fires_within_seconds(
    azurite_of_its_own: Azurite, tmp_path: Path
) -> None:
    clock = HostClock.reading(second=46, within=1.5)  # serving about 14 s before its tick
    env = crash_environment(azurite_of_its_own, "crashdispatch", **clock.setting())
    target = Target()
    host = CrashingHost(env, tmp_path / "host.log")
    host.start()
    try:
        tick = clock.next_minute(room=8)  # room to create the jobs before the kill
        # Due right after the missed tick (queued by the tick before it, the dead host held the first of them),
        # and in the minute after, which the missed tick would have dispatched.
        held = {f"held{i:02d}": tick + timedelta(seconds=i // 2) for i in range(20)}
        later = {f"later{i:02d}": tick + timedelta(minutes=1, seconds=i) for i in range(20)}
        create_one_shot_jobs(host.url, target, held | later)
        store = Store.from_settings(Settings.from_environment(env))
        clock.sleep_until(tick - timedelta(seconds=1))
        host.kill()
        clock.sleep_until(tick + timedelta(seconds=1))
        back = host.start()
        back_at = clock.now()
        while time.monotonic() - back < BOUND + 10 and undispatched(store, later):
            time.sleep(0.5)
        dispatched = time.monotonic() - back
        assert not undispatched(store, later), "the missed tick was not made up: " + str(undispatched(store, later))
        assert dispatched <= BOUND, dispatched
        target.wait_for(set(held), within=BOUND + 15)
        fired = target.fired()
        assert set(held) <= set(fired), sorted(set(held) - set(fired))
        assert all(fired[name] == 1 for name in held), fired  # none had fired before the kill
        late = {}
        for name, due in held.items():  # within the bound of the host being back, or of its second if later
            late[name] = (target.first(name) or 0.0) - back - max((due - back_at).total_seconds(), 0.0)
        assert max(late.values()) <= BOUND, late
        print(
            f"the missed minute was dispatched within {dispatched:.1f} s of the restart; the held occurrences "
            f"ran at most {max(late.values()):.1f} s after the host was back (or their second)"
        )
    finally:
        host.stop()
        target.close()
