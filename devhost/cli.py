"""`python -m devhost`: run the app locally in-process, like `func start`, with development storage when needed.

Contract:
1. Apply `<app-dir>/local.settings.json` Values to the environment (environment wins; the file is first
   created from local.settings.sample.json when only the sample exists).
2. If AzureWebJobsStorage is unset or "UseDevelopmentStorage=true": reuse an Azurite already listening on
   127.0.0.1:10000-10002, or start one with data in `<app-dir>/.local/azurite`; every setting equal to
   "UseDevelopmentStorage=true" then becomes its connection string. Otherwise no Azurite is touched.
3. Host the app in-process (LocalHost). With Azure Functions Core Tools, run `func start` instead.
4. When ready, write exactly one line to stdout: the base URL, e.g. http://127.0.0.1:7071/api. Logs go to
   stderr, whose last line at start is the console's address (`Console: <base URL>/console`).
5. Ctrl-C, SIGTERM and SIGHUP (a closed terminal) stop the host and the Azurite this command started; exit
   status 0. The Azurite it starts also dies with this process if it is killed outright (Linux: a parent-death
   signal, devhost/azurite.py), so none is left behind on 10000-10002.
6. A startup failure exits 1 with one line on stderr and no traceback: a port already in use says so with
   the way out (`PORT=7072 make run`), before Azurite is touched; keys the host cannot check
   (devhost/keys.py) say what to change; an unexpected failure is logged with its traceback.
Port: --port, else env PORT, else local.settings.json Host.LocalHttpPort, else 7071. Azurite's ports: 10000-10002,
or DEVHOST_AZURITE_PORTS=blob,queue,table (for a machine where those are taken, and the tests).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from devhost.azurite import Azurite, AzuritePorts
from devhost.host import LocalHost
from devhost.keys import KeyConfigurationError
from devhost.settings import DEFAULT_CONNECTION, DEVELOPMENT_STORAGE, apply_settings, read_local_settings

log = logging.getLogger("devhost")
STANDARD_PORTS = AzuritePorts(blob=10000, queue=10001, table=10002)
DEFAULT_HTTP_PORT = 7071


class PortInUse(Exception):
    """The HTTP port cannot be bound: one line for the user, with the way out."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(
            f"error: {host}:{port} is already in use (another `make run`?); stop it, or choose "
            f"another port: PORT={port + 1} make run"
        )


def _bindable(host: str, port: int) -> bool:
    """Whether a server could listen on host:port now (SO_REUSEADDR as werkzeug binds, so a port only
    lingering in TIME_WAIT counts as free)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def azurite_ports() -> AzuritePorts:
    """10000-10002, or DEVHOST_AZURITE_PORTS=blob,queue,table."""
    configured = os.environ.get("DEVHOST_AZURITE_PORTS", "").strip()
    if not configured:
        return STANDARD_PORTS
    blob, queue, table = (int(p) for p in configured.split(","))
    return AzuritePorts(blob=blob, queue=queue, table=table)


def _port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def _is_development_storage(value: str | None) -> bool:
    return value is None or value.strip().lower() == DEVELOPMENT_STORAGE.lower()


def ensure_development_storage(app_dir: Path) -> Azurite | None:
    """Step 2 of the module contract; returns the Azurite it started, if any (the caller stops it)."""
    if not _is_development_storage(os.environ.get(DEFAULT_CONNECTION)):
        return None
    chosen = azurite_ports()
    ports = (chosen.blob, chosen.queue, chosen.table)
    open_ports = [p for p in ports if _port_open(p)]
    started = None
    if len(open_ports) == len(ports):
        log.info(
            "Reusing the Azurite already listening on ports %s (not started here: it keeps running when this "
            "host stops)",
            ports,
        )
    elif open_ports:
        raise RuntimeError(f"ports {open_ports} are taken but not all of {ports}: cannot start or reuse Azurite")
    else:
        log.info("Starting Azurite (data in %s)", app_dir / ".local" / "azurite")
        started = Azurite(app_dir / ".local" / "azurite", chosen).start()
    for name, value in list(os.environ.items()):
        if value.strip().lower() == DEVELOPMENT_STORAGE.lower():
            os.environ[name] = chosen.connection_string
    os.environ[DEFAULT_CONNECTION] = chosen.connection_string
    return started


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m devhost", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--app-dir", type=Path, default=Path.cwd(), help="folder holding function_app.py")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (default: $PORT, LocalHttpPort or 7071)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (in-process host only)")
    # Accepted and ignored: scripts written when devhost could hand over to Core Tools' `func` still pass it.
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _run_in_process(app_dir: Path, host: str, port: int, stop: threading.Event, azurite: Azurite | None) -> int:
    try:
        local = LocalHost(app_dir, port, host, load_settings=False).start()
    except OSError as error:
        if port and not _bindable(host, port):  # taken between the check and the bind
            raise PortInUse(host, port) from error
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
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    # SIGHUP: the terminal was closed. Its default would end the process without stopping Azurite.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, request_stop)
    app_dir: Path = args.app_dir.resolve()
    azurite: Azurite | None = None
    try:
        settings = read_local_settings(app_dir)
        apply_settings(settings.values)
        port = args.port or int(os.environ.get("PORT") or settings.local_http_port or DEFAULT_HTTP_PORT)
        if not _bindable(args.host, port):
            raise PortInUse(args.host, port)
        azurite = ensure_development_storage(app_dir)
        code = 0 if stop.is_set() else _run_in_process(app_dir, args.host, port, stop, azurite)
    except PortInUse as error:
        sys.stderr.write(f"{error}\n")
        code = 1
    except KeyConfigurationError as error:  # one line: what to change, no traceback
        log.error("devhost refuses to start: %s", error)
        code = 1
    except Exception as error:
        log.exception("devhost failed: %s", error)
        code = 1
    finally:
        if azurite is not None:
            azurite.stop()
    _exit_even_if_functions_hang(code)
    return code


def _exit_even_if_functions_hang(code: int) -> None:
    """Exit now if a function still runs: the interpreter would otherwise wait for its pool thread."""
    stuck = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if stuck:
        log.warning("Leaving %d function invocation(s) unfinished", len(stuck))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
