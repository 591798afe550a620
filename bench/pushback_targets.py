"""The targets of bench/pushback.py, in a process of their own (so they share no GIL with the benchmark's storage
meter), on loopback:

- "budget": answers 200 (after `delay`) to at most `rate` requests in any sliding second, counted at arrival, and
  429 with `Retry-After: <retry_after>` at once to every request above that;
- "outage": answers 500 at once until the epoch instant `up_at`, then 200 (after `delay`).

Every request is written as one line (`Answer`: target, job id, expected execution time, arrival, status) when
it arrives, with the status it is given; `PushbackTargets.answers()` reads them back (flushed every 0.1 s).

    targets = PushbackTargets(folder, rate=50, retry_after=5, delay=0.5, up_at=time.time() + 120).start()
    targets.url("budget")  ->  http://127.0.0.1:PORT/fire
"""

from __future__ import annotations

import asyncio
import multiprocessing
import sys
import time
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from bench.targets import complete_lines, utc_of


@dataclass(frozen=True)
class Answer:
    target: str
    job: str
    expected: datetime
    at: datetime
    status: int

    def tsv(self) -> str:
        """The answer as a line of `--dump`."""
        return f"{self.target}\t{self.job}\t{self.expected.isoformat()}\t{self.at.isoformat()}\t{self.status}\n"


@dataclass(frozen=True)
class Config:
    rate: int
    retry_after: int
    delay: float
    up_at: float  # epoch seconds


def _serve(config: Config, path: str, ports: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from aiohttp import web

    out = open(path, "a", buffering=1 << 16)  # noqa: SIM115 - flushed by the loop, closed at exit
    taken: deque[float] = deque()  # the budget target's accepted arrivals of the last second

    def record(name: str, request: Any, at: float, status: int) -> None:
        out.write(
            f"{name}\t{request.headers.get('x-ms-scheduler-jobid', '')}\t"
            f"{request.headers.get('x-ms-scheduler-expected-execution-time', '')}\t{at:.6f}\t{status}\n"
        )

    async def budget(request: web.Request) -> web.Response:
        at = time.time()
        while taken and at - taken[0] >= 1.0:
            taken.popleft()
        if len(taken) >= config.rate:
            record("budget", request, at, 429)
            await request.read()
            return web.Response(status=429, text="slow down", headers={"Retry-After": str(config.retry_after)})
        taken.append(at)
        record("budget", request, at, 200)
        await request.read()
        await asyncio.sleep(config.delay)
        return web.Response(text="ok")

    async def outage(request: web.Request) -> web.Response:
        at = time.time()
        up = at >= config.up_at
        record("outage", request, at, 200 if up else 500)
        await request.read()
        if not up:
            return web.Response(status=500, text="down")
        await asyncio.sleep(config.delay)
        return web.Response(text="ok")

    async def main() -> None:
        found: dict[str, int] = {}
        for name, handler in (("budget", budget), ("outage", outage)):
            app = web.Application()
            app.router.add_post("/fire", handler)
            runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
            await site.start()
            found[name] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ports.put(found)
        while True:
            await asyncio.sleep(0.1)
            out.flush()

    asyncio.run(main())


class PushbackTargets:
    def __init__(self, folder: Path, rate: int, retry_after: int, delay: float, up_at: float) -> None:
        self.config = Config(rate, retry_after, delay, up_at)
        self.path = folder / "answers.tsv"
        self.ports: dict[str, int] = {}
        self._process: BaseProcess | None = None
        self._read = 0
        self._seen: list[Answer] = []

    def start(self) -> PushbackTargets:
        context = multiprocessing.get_context("spawn")
        found: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
        process = context.Process(target=_serve, args=(self.config, str(self.path), found), daemon=True)
        process.start()
        self._process = process
        self.ports = found.get(timeout=60)
        return self

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}/fire"

    def answers(self, target: str | None = None) -> list[Answer]:
        """Every request so far (of `target`, or of both), in arrival order of the log."""
        lines, self._read = complete_lines(self.path, self._read)
        for line in lines:
            name, job, expected, at, status = line.split("\t")
            self._seen.append(Answer(name, job, utc_of(expected), datetime.fromtimestamp(float(at), UTC), int(status)))
        return [a for a in self._seen if target is None or a.target == target]

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.join(10)


if __name__ == "__main__":
    sys.exit("bench/pushback_targets.py is a module of the benchmarks")
