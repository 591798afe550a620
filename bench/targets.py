"""Local action targets for the benchmarks, in a process of their own (so they do not share a GIL with the
benchmark's storage meter): one aiohttp server per host, each answering after a fixed delay, or hanging
past the scheduler's 60 s deadline; optionally over HTTPS with a certificate of a throw-away CA (bench/tls.py)
that only the benchmark's scheduler trusts (SCHEDULER_TRUSTED_CA_FILE).

Every request is recorded as one line of `arrivals` (job id, expected execution time, arrival time in epoch
seconds), written as it arrives, before the delay; `Targets.arrivals()` reads them back.

    targets = Targets({"fast": 0.0, "slow": 0.5, "hang": None}, https={"tls": 0.5}, folder=tmp).start()
    targets.url("slow")  ->  http://127.0.0.1:PORT/fire
"""

from __future__ import annotations

import asyncio
import multiprocessing
import ssl
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

HANG_SECONDS = 90.0  # past the scheduler's 60 s deadline: the attempt times out


@dataclass(frozen=True)
class Arrival:
    job: str
    expected: datetime
    at: datetime


def _serve(
    hosts: dict[str, float | None],
    https: dict[str, float | None],
    cert: tuple[str, str] | None,
    arrivals_path: str,
    ports: multiprocessing.Queue,
) -> None:  # type: ignore[type-arg]
    from aiohttp import web

    out = open(arrivals_path, "a", buffering=1 << 16)  # noqa: SIM115 - flushed by the loop, closed at exit

    async def main() -> None:
        async def flusher() -> None:
            while True:
                await asyncio.sleep(0.1)
                out.flush()

        def handler(delay: float | None) -> web.RequestHandler:  # type: ignore[name-defined]
            async def fire(request: web.Request) -> web.Response:
                at = time.time()
                await request.read()
                out.write(
                    f"{request.headers.get('x-ms-scheduler-jobid', '')}\t"
                    f"{request.headers.get('x-ms-scheduler-expected-execution-time', '')}\t{at:.6f}\n"
                )
                await asyncio.sleep(HANG_SECONDS if delay is None else delay)
                return web.Response(text="ok")

            return fire

        found: dict[str, int] = {}
        tls = None
        if cert is not None:
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            tls.load_cert_chain(*cert)
        for name, delay, context in [
            *((n, d, None) for n, d in hosts.items()),
            *((n, d, tls) for n, d in https.items()),
        ]:
            app = web.Application()
            app.router.add_post("/fire", handler(delay))
            runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context, backlog=4096)
            await site.start()
            found[name] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ports.put(found)
        await flusher()

    asyncio.run(main())


class Targets:
    def __init__(
        self,
        hosts: dict[str, float | None],
        folder: Path,
        https: dict[str, float | None] | None = None,
        cert: tuple[Path, Path] | None = None,
    ) -> None:
        self.hosts, self.https, self.cert = hosts, https or {}, cert
        self.path = folder / "arrivals.tsv"
        self.ports: dict[str, int] = {}
        self._process: multiprocessing.Process | None = None
        self._read = 0
        self._seen: list[Arrival] = []

    def start(self) -> Targets:
        context = multiprocessing.get_context("spawn")
        found: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
        cert = (str(self.cert[0]), str(self.cert[1])) if self.cert else None
        self._process = context.Process(
            target=_serve, args=(self.hosts, self.https, cert, str(self.path), found), daemon=True
        )
        self._process.start()
        self.ports = found.get(timeout=60)
        return self

    def url(self, name: str) -> str:
        scheme = "https" if name in self.https else "http"
        host = "localhost" if scheme == "https" else "127.0.0.1"  # the certificate names localhost
        return f"{scheme}://{host}:{self.ports[name]}/fire"

    def arrivals(self) -> list[Arrival]:
        """Every arrival so far (the target flushes its log every 0.1 s)."""
        lines, self._read = complete_lines(self.path, self._read)
        for line in lines:
            job, expected, at = line.split("\t")
            self._seen.append(Arrival(job, utc_of(expected), datetime.fromtimestamp(float(at), UTC)))
        return list(self._seen)

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.join(10)


def complete_lines(path: Path, offset: int) -> tuple[list[str], int]:
    """The whole lines a target's log holds past `offset` (a line still being written waits for the next read), and
    the offset after them."""
    if not path.exists():
        return [], offset
    with path.open() as log:
        log.seek(offset)
        text = log.read()
    complete = text[: text.rfind("\n") + 1]
    return complete.splitlines(), offset + len(complete.encode())


def utc_of(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else datetime.min.replace(tzinfo=UTC)


if __name__ == "__main__":
    sys.exit("bench/targets.py is a module of the benchmarks")
