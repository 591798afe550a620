"""`python -m devhost`: run the app locally in-process, like `func start`, with development storage when needed.

Contract:
1. Apply `<app-dir>/local.settings.json` Values to the environment (environment wins; the file is first
   created from local.settings.sample.json when only the sample exists).
2. If AzureWebJobsStorage is unset or "UseDevelopmentStorage=true": start an Azurite of its own on
   127.0.0.1:10000-10002 (or DEVHOST_AZURITE_PORTS) with data in `<app-dir>/.local/azurite`; every setting
   equal to "UseDevelopmentStorage=true" then becomes its connection string. Ports held by an Azurite it did
   not start are refused, never shared (devhost/devstorage.py). Otherwise no Azurite is touched.
3. Host the app in-process (LocalHost). With Azure Functions Core Tools, run `func start` instead.
4. When ready, write exactly one line to stdout: the base URL, e.g. http://127.0.0.1:7071/api. Logs go to
   stderr, whose last line at start is the console's address (`Console: <base URL>/console`).
5. Ctrl-C, SIGTERM and SIGHUP (a closed terminal) stop the host and the Azurite this command started; exit
   status 0. The Azurite it starts also dies with this process if it is killed outright (Linux: a parent-death
   signal, devhost/azurite.py), so none is left behind on 10000-10002. A host still not stopped
   `STOP_GRACE_SECONDS` after the signal writes every thread's stack to stderr and exits 1 (what hung is then
   known, and a script's wait for the host ends).
6. A startup failure exits 1 with one line on stderr and no traceback: a port already in use, or Azurite's
   ports held by someone else's Azurite, say so with a way out that gives this host a separate, working setup
   (`PORT=7072 DEVHOST_AZURITE_PORTS=10003,10004,10005 make run`), before Azurite is touched; keys the host
   cannot check (devhost/keys.py) say what to change; an unexpected failure is logged with its traceback.
7. `--clock-offset SECONDS` or `--start-at INSTANT` (ISO 8601, UTC unless it names a zone) runs the host's
   timers and the app's clock at real time + one offset (SCHEDULER_CLOCK_OFFSET_SECONDS, which this sets; the flag
   wins over the environment): a test starts a host seconds before its minute tick. Azurite only; a refusal
   (another storage, a malformed value) exits 1 with one line.
8. When the environment names no managed-identity endpoint (IDENTITY_ENDPOINT / IDENTITY_HEADER, as Azure Functions
   sets them), serve a local one (devhost/managed_identity.py) for the host's life and set both, so a ManagedIdentity
   Http action gets a token here too; its issuer's keys are logged at start for a local target to validate with.
9. `--per-function-scaling` sets DEVHOST_PER_FUNCTION_SCALING=1 (the flag wins over the environment): the HTTP
   functions run in worker processes apart from the queue and timer functions (devhost/per_function_scaling.py).
Port: --port, else env PORT, else local.settings.json Host.LocalHttpPort, else 7071. Azurite's ports: 10000-10002,
or DEVHOST_AZURITE_PORTS=blob,queue,table; `--help` names both.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from devhost.azurite import Azurite
from devhost.devstorage import (
    DEFAULT_HTTP_PORT,
    PORTS_SETTING,
    StoragePlan,
    StorageRefused,
    bindable,
    plan_development_storage,
    refusal,
    way_out,
)
from devhost.host import LocalHost
from devhost.keys import KeyConfigurationError
from devhost.managed_identity import LocalIdentity
from devhost.per_function_scaling import PER_FUNCTION_SCALING_SETTING
from devhost.settings import DEFAULT_CONNECTION, DEVELOPMENT_STORAGE, apply_settings, read_local_settings
from devhost.stop_request import StopRequest
from shared.settings import ConfigurationError
from shared.settings.clock_offset import CLOCK_OFFSET_SETTING

log = logging.getLogger("devhost")

_ENVIRONMENT = f"""environment:
  PORT                   the HTTP port, as --port (`PORT=7072 make run`)
  {PORTS_SETTING}  blob,queue,table ports of the Azurite this host starts (default
                         10000,10001,10002; data in .local/azurite-<blob port> when moved). A second
                         `make run` needs its own: this host refuses ports held by an Azurite it did not
                         start, e.g. PORT=7072 {PORTS_SETTING}=10003,10004,10005 make run
  AzureWebJobsStorage    a connection string: use that storage and start no Azurite (share one on purpose)
  {CLOCK_OFFSET_SETTING}  seconds the timers' and the app's clock run ahead of real time (Azurite only),
                         as --clock-offset
  FUNCTIONS_WORKER_PROCESS_COUNT  worker processes that run the functions, 1-10 (default 1: in the host's
                         process), as on the Functions host
  {PER_FUNCTION_SCALING_SETTING}  1: the HTTP functions in worker processes apart from the queue and
                         timer functions, as Flex Consumption scales them; as --per-function-scaling
"""


class PortInUse(Exception):
    """The HTTP port cannot be bound: one line for the user, with the way out."""

    def __init__(self, host: str, port: int, plan: StoragePlan | None) -> None:
        super().__init__(
            f"error: {host}:{port} is already in use (another `make run`?); stop it, or choose "
            f"another port: {way_out(port, plan, http_free=False)}"
        )


def ensure_development_storage(app_dir: Path, plan: StoragePlan | None, port: int) -> Azurite | None:
    """Step 2 of the module contract; returns the Azurite it started, if any (the caller stops it)."""
    if plan is None:
        return None
    started = None
    if plan.action == "refuse":
        raise refusal(plan, port)
    if plan.action == "reuse":
        log.info(
            "Reusing this checkout's `python -m devhost.azurite` on ports %s (it keeps running when this host stops)",
            plan.ports,
        )
    else:
        log.info("Starting Azurite on ports %s (data in %s)", plan.ports, plan.location)
        started = Azurite(plan.location, plan.ports).start()
    for name, value in list(os.environ.items()):
        if value.strip().lower() == DEVELOPMENT_STORAGE.lower():
            os.environ[name] = plan.ports.connection_string
    os.environ[DEFAULT_CONNECTION] = plan.ports.connection_string
    return started


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m devhost",
        description=__doc__.split("\n", 1)[0],
        epilog=_ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--app-dir", type=Path, default=Path.cwd(), help="folder holding function_app.py")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (default: $PORT, LocalHttpPort or 7071)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (in-process host only)")
    clock = parser.add_mutually_exclusive_group()
    clock.add_argument(
        "--clock-offset",
        type=float,
        metavar="SECONDS",
        help="run the timers and the app's clock this many seconds ahead of real time (negative: behind)",
    )
    clock.add_argument(
        "--start-at",
        type=_instant,
        metavar="INSTANT",
        help="start the timers and the app's clock at this instant (ISO 8601, UTC unless it names a zone)",
    )
    parser.add_argument(
        "--per-function-scaling",
        action="store_true",
        help=f"run the HTTP functions in worker processes of their own, as Flex Consumption does "
        f"({PER_FUNCTION_SCALING_SETTING}=1)",
    )
    # Accepted and ignored: scripts written when devhost could hand over to Core Tools' `func` still pass it.
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# Seconds from a stop signal to a forced exit with every thread's stack on stderr (step 5): the host's own stop
# takes about its 2 s budget, the interpreter's exit less than a second more.
STOP_GRACE_SECONDS = 10.0


def _instant(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 instant: {text!r}") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _apply_clock_flags(args: argparse.Namespace) -> None:
    """Step 7: the offset the flags ask for, as the setting the host's timers and the app both read. Taken just
    before the host starts, so `--start-at` is what the clock reads as the host starts."""
    if args.start_at is not None:
        os.environ[CLOCK_OFFSET_SETTING] = f"{(args.start_at - datetime.now(UTC)).total_seconds():.3f}"
    elif args.clock_offset is not None:
        os.environ[CLOCK_OFFSET_SETTING] = f"{args.clock_offset:.3f}"


def _run_in_process(app_dir: Path, host: str, port: int, stop: StopRequest, azurite: Azurite | None) -> int:
    try:
        local = LocalHost(app_dir, port, host, load_settings=False).start()
    except OSError as error:
        if port and not bindable(port, host):  # taken between the check and the bind
            raise PortInUse(host, port, None) from error
        raise
    try:
        print(local.base_url, flush=True)
        # The last line of the start: where to go next (the routes above it are many).
        stops = "the host and the Azurite it started" if azurite else "the host"
        sys.stderr.write(f"Console: {local.base_url}/console   (Ctrl-C stops {stops})\n")
        sys.stderr.flush()
        stop.wait()
    finally:
        local.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="[%(asctime)s] %(levelname)s %(message)s")
    # The storage SDK logs every HTTP call at INFO; queue polling would drown the app's own logs.
    logging.getLogger("azure").setLevel(logging.WARNING)
    stop = StopRequest(grace=STOP_GRACE_SECONDS)
    # SIGHUP: the terminal was closed. Its default would end the process without stopping Azurite.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop.handle)
    app_dir: Path = args.app_dir.resolve()
    azurite: Azurite | None = None
    identity: LocalIdentity | None = None
    try:
        settings = read_local_settings(app_dir)
        apply_settings(settings.values)
        port = args.port or int(os.environ.get("PORT") or settings.local_http_port or DEFAULT_HTTP_PORT)
        plan = plan_development_storage(app_dir)
        if not bindable(port, args.host):
            raise PortInUse(args.host, port, plan)
        azurite = ensure_development_storage(app_dir, plan, port)
        _apply_clock_flags(args)
        if args.per_function_scaling:  # the flag wins over the environment, as --clock-offset does
            os.environ[PER_FUNCTION_SCALING_SETTING] = "1"
        identity = serve_local_identity()
        code = 0 if stop.requested else _run_in_process(app_dir, args.host, port, stop, azurite)
    except (PortInUse, StorageRefused) as error:
        sys.stderr.write(f"{error}\n")
        code = 1
    except (KeyConfigurationError, ConfigurationError) as error:  # one line: what to change, no traceback
        log.error("devhost refuses to start: %s", error)
        code = 1
    except Exception as error:
        log.exception("devhost failed: %s", error)
        code = 1
    finally:
        if identity is not None:
            identity.stop()
        if azurite is not None:
            azurite.stop()
    _exit_even_if_functions_hang(code)
    return code


def serve_local_identity() -> LocalIdentity | None:
    """Step 8: a local managed-identity endpoint, unless the environment names one (the caller stops it)."""
    if os.environ.get("IDENTITY_ENDPOINT") or os.environ.get("IDENTITY_HEADER"):
        return None
    identity = LocalIdentity().start()
    os.environ.update(identity.environment())
    log.info("Managed identity for targets: a local endpoint, its keys at %s/discovery/keys", identity.url)
    return identity


def _exit_even_if_functions_hang(code: int) -> None:
    """Exit now if a function still runs: the interpreter would otherwise wait for its pool thread."""
    stuck = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if stuck:
        log.warning("Leaving %d function invocation(s) unfinished", len(stuck))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
