"""What bench/overload.py asks the API while the load runs: one job PUT a second, timed, and GET /api/health every
10 s, recorded.

`Probes(base_url).start()` starts both in threads of their own; `stop()` ends them. Each PUT creates a new one-shot
job 30 days ahead (it never fires) in collections of its own (`probe0`, `probe1`, ...: a new one every 900 jobs,
under a P20Premium collection's 1,000), sent on the second whatever the previous one is doing (a pool of 8), so a
slow answer shows as its own time and not as the next one's. A PUT that got no answer counts as status 0 with its
time to the failure. Health answers are kept as they came: status, the executor's backlog, the problems.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.harness import GROUP, VERSION, one_shot, request

HEALTH_EVERY = 10.0  # seconds
PER_COLLECTION = 900


@dataclass(frozen=True)
class Put:
    at: datetime  # when it was sent
    seconds: float
    status: int  # 0: no answer


@dataclass(frozen=True)
class Health:
    at: datetime
    status: int  # HTTP; 0: no answer
    said: str  # "Healthy", "Degraded", "Unhealthy" or "no answer"
    queued: int | None  # executor.queuedMessages
    behind_s: float | None  # executor.behindSeconds
    overdue: int | None  # backlog.overdueOccurrences (the dispatcher's)
    problems: tuple[str, ...] = ()

    def figures(self, since: datetime) -> dict[str, Any]:
        return {
            "at_s": round((self.at - since).total_seconds(), 1),
            "http": self.status,
            "status": self.said,
            "queued_messages": self.queued,
            "behind_s": self.behind_s,
            "overdue_occurrences": self.overdue,
            "problems": list(self.problems),
        }


@dataclass
class Probes:
    base: str  # the host's /api URL
    target: str  # where a probe job would POST (never: it is 30 days ahead)
    puts: list[Put] = field(default_factory=list)
    health: list[Health] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(8)
        self._threads = [threading.Thread(target=f, daemon=True) for f in (self._put_loop, self._health_loop)]

    def start(self) -> Probes:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        self._pool.shutdown(wait=True)

    def _put_loop(self) -> None:
        count = 0
        following = time.monotonic()
        while not self._stop.is_set():
            if count % PER_COLLECTION == 0:
                self._collection(f"probe{count // PER_COLLECTION}")
            self._pool.submit(self._put, count)
            count += 1
            following += 1.0
            self._stop.wait(max(following - time.monotonic(), 0.0))

    def _collection(self, name: str) -> None:
        body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}}
        with contextlib.suppress(OSError):  # its job PUTs then fail, and are counted as failures
            request("PUT", f"{self.base}{GROUP}/{name}{VERSION}", body)

    def _put(self, count: int) -> None:
        at = datetime.now(UTC)
        url = f"{self.base}{GROUP}/probe{count // PER_COLLECTION}/jobs/p{count}{VERSION}"
        body = {"properties": one_shot((at + timedelta(days=30)).replace(microsecond=0), self.target)}
        began = time.perf_counter()
        try:
            status, _ = request("PUT", url, body, timeout=60)
        except OSError:
            status = 0
        with self._lock:
            self.puts.append(Put(at, time.perf_counter() - began, status))

    def _health_loop(self) -> None:
        while not self._stop.is_set():
            self._pool.submit(self._health)
            self._stop.wait(HEALTH_EVERY)

    def _health(self) -> None:
        at = datetime.now(UTC)
        try:
            status, text = request("GET", f"{self.base}/health", timeout=30)
            body = json.loads(text)
        except (OSError, ValueError):
            found = Health(at, 0, "no answer", None, None, None)
        else:
            executor = body.get("executor") or {}
            found = Health(
                at,
                status,
                str(body.get("status")),
                executor.get("queuedMessages"),
                executor.get("behindSeconds"),
                (body.get("backlog") or {}).get("overdueOccurrences"),
                tuple(body.get("problems") or ()),
            )
        with self._lock:
            self.health.append(found)
