"""`python -m devhost --clock-offset SECONDS` / `--start-at INSTANT`: the real app under the local host runs its
timers, its API and its executor on one clock, real time + the offset (shared/settings/clock_offset.py), so a
process-level test starts a host seconds before its minute tick. Off Azurite the offset is refused at start.

Each host here has a host id of its own: the timers' schedule status (devhost/schedule_monitor.py) is kept per host
id in the session's Azurite, and another day's status would make a host fire its tick past due at start."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

from devhost.azurite import Azurite, free_port
from devhost.schedule_monitor import HOST_ID_SETTING, ScheduleMonitor
from shared.settings.clock_offset import CLOCK_OFFSET_SETTING
from tests.support.host_clock import HostClock
from tests.support.local_host import local_host

ROOT = Path(__file__).resolve().parents[2]
COLLECTION = "subscriptions/s1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/offset"
V = {"api-version": "2016-03-01"}


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _host_id() -> str:
    return f"offset{uuid.uuid4().hex[:12]}"


def test_a_host_with_a_clock_offset_answers_and_fires_a_job_on_its_own_clock(azurite: Azurite, http_target) -> None:
    # A day ahead and not a whole minute: a job reckoned on real time would fire a day late, never in this test.
    clock = HostClock(timedelta(days=1, seconds=17.5))
    flags = ("--clock-offset", "86417.5")
    with local_host(azurite, flags, **{HOST_ID_SETTING: _host_id()}) as base:
        checked = _instant(requests.get(f"{base}/health", timeout=10).json()["checkedAt"])
        assert abs(checked - clock.now()) < timedelta(seconds=2), (checked, clock.now())  # the API's "now"
        # The console's schedule preview reckons from the same clock: a minute's next occurrence is the host's.
        every_minute = {"jobs": [{"recurrence": {"frequency": "Minute", "interval": 1}}], "count": 1}
        preview = requests.post(f"{base}/console/schedule", json=every_minute, timeout=10).json()
        first = _instant(preview["value"][0]["occurrences"][0])
        assert clock.now() - timedelta(seconds=2) <= first <= clock.now() + timedelta(seconds=62), (first, clock.now())
        made = requests.put(
            f"{base}/{COLLECTION}",
            params=V,
            timeout=10,
            json={"location": "West US", "properties": {"sku": {"name": "Standard"}}},
        )
        assert made.status_code == 201, made.text
        due = (clock.now() + timedelta(seconds=5)).replace(microsecond=0)
        job = {
            "startTime": due.isoformat(),
            "action": {"type": "Http", "request": {"uri": f"{http_target.url}/offset", "method": "POST"}},
        }
        made = requests.put(f"{base}/{COLLECTION}/jobs/ahead", params=V, timeout=10, json={"properties": job})
        assert made.status_code == 201, made.text
        hits = http_target.wait_for(1, 12)  # 5 s on the host's clock, as on every clock
        assert hits, "the job did not fire at its instant on the host's clock"
        fired = clock.host_time(hits[0].at)
        assert due - timedelta(seconds=0.2) <= fired <= due + timedelta(seconds=2), (fired, due)
        assert hits[0].headers["x-ms-scheduler-expected-execution-time"] == due.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_host_started_at_a_chosen_instant_ticks_at_the_minute_of_its_own_clock(azurite: Azurite) -> None:
    start = datetime(2031, 5, 6, 7, 8, 55, tzinfo=UTC)
    tick = datetime(2031, 5, 6, 7, 9, tzinfo=UTC)
    host_id = _host_id()
    monitor = ScheduleMonitor(azurite.connection_string, host_id)
    with local_host(azurite, ("--start-at", "2031-05-06T07:08:55Z"), **{HOST_ID_SETTING: host_id}) as base:
        served = time.monotonic()
        health = requests.get(f"{base}/health", timeout=10).json()
        assert start <= _instant(health["checkedAt"]) < start + timedelta(seconds=4), health["checkedAt"]
        # Its first tick comes at 07:09:00 on its clock, 5 s after it started: the timer's schedule status (the
        # host's clock) names that instant, the dispatcher's heartbeat (the app's clock, as the tick ended) follows.
        status = monitor.status("dispatcher")
        while time.monotonic() - served < 20 and (status is None or status.last < tick):
            time.sleep(0.2)
            status = monitor.status("dispatcher")
        assert status is not None and status.last.replace(microsecond=0) == tick, status
        assert status.next == tick + timedelta(minutes=1)
        assert time.monotonic() - served < 10, "ticked at the real minute, not at the host's"
        last_tick = requests.get(f"{base}/health", timeout=10).json()["dispatcher"]["lastTick"]
        assert last_tick is not None and tick <= _instant(last_tick) < tick + timedelta(seconds=5), last_tick


def test_a_clock_offset_off_azurite_is_refused_at_start_in_one_line() -> None:
    """The Functions host in Azure would not move its timers: a deployment's storage refuses the offset."""
    account = "http://127.0.0.1:9/acct"  # never reached: the refusal comes before storage is touched
    storage = (
        f"DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=a2V5;BlobEndpoint={account};"
        f"QueueEndpoint={account};TableEndpoint={account};"
    )
    env = {**os.environ, "AzureWebJobsStorage": storage}
    env.pop(CLOCK_OFFSET_SETTING, None)
    ran = subprocess.run(
        [sys.executable, "-m", "devhost", "--port", str(free_port()), "--clock-offset", "30"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 1, ran.stderr
    assert f"{CLOCK_OFFSET_SETTING} is for the local host only" in ran.stderr.strip().splitlines()[-1]
    assert "Traceback" not in ran.stderr and not ran.stdout


def test_the_clock_flags_take_a_number_or_an_instant_and_not_both() -> None:
    def run(*flags: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "devhost", "--port", str(free_port()), *flags]
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)

    bad_instant = run("--start-at", "tomorrow")
    assert bad_instant.returncode == 2 and "not an ISO 8601 instant: 'tomorrow'" in bad_instant.stderr
    both = run("--clock-offset", "5", "--start-at", "2031-05-06T07:08:55Z")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
    assert "--clock-offset SECONDS" in run("--help").stdout
