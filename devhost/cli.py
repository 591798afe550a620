"""`python -m devhost`: run the app locally in-process, like `func start`, with development storage when needed.

Contract:
1. Apply `<app-dir>/local.settings.json` Values to the environment (environment wins; the file is first
   created from local.settings.sample.json when only the sample exists).
2. If AzureWebJobsStorage is unset or "UseDevelopmentStorage=true": reuse an Azurite already listening on
   127.0.0.1:10000-10002, or start one with data in `<app-dir>/.local/azurite`; every setting equal to
   "UseDevelopmentStorage=true" then becomes its connection string. Otherwise no Azurite is touched.
3. Host the app in-process (LocalHost). With Azure Functions Core Tools, run `func start` instead.
4. When ready, write exactly one line to stdout: the base URL, e.g. http://127.0.0.1:7071/api. Logs go to
   stderr.
5. Ctrl-C / SIGTERM stop the host and the Azurite this command started; exit status 0. A startup failure
   exits 1 (keys the host cannot check, devhost/keys.py: one line, no traceback).
Port: --port, else env PORT, else local.settings.json Host.LocalHttpPort, else 7071.
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
    ports = (STANDARD_PORTS.blob, STANDARD_PORTS.queue, STANDARD_PORTS.table)
    open_ports = [p for p in ports if _port_open(p)]
    started = None
    if len(open_ports) == len(ports):
        log.info("Reusing the Azurite already listening on ports %s", ports)
    elif open_ports:
        raise RuntimeError(f"ports {open_ports} are taken but not all of {ports}: cannot start or reuse Azurite")
    else:
        log.info("Starting Azurite (data in %s)", app_dir / ".local" / "azurite")
        started = Azurite(app_dir / ".local" / "azurite", STANDARD_PORTS).start()
    for name, value in list(os.environ.items()):
        if value.strip().lower() == DEVELOPMENT_STORAGE.lower():
            os.environ[name] = STANDARD_PORTS.connection_string
    os.environ[DEFAULT_CONNECTION] = STANDARD_PORTS.connection_string
    return started


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m devhost", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--app-dir", type=Path, default=Path.cwd(), help="folder holding function_app.py")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (default: $PORT, LocalHttpPort or 7071)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (in-process host only)")
    # Accepted and ignored: scripts written when devhost could hand over to Core Tools' `func` still pass it.
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _run_in_process(app_dir: Path, host: str, port: int, stop: threading.Event) -> int:
    with LocalHost(app_dir, port, host, load_settings=False) as local:
        print(local.base_url, flush=True)
        log.info("Host listening on %s:%d (Ctrl-C to stop)", host, local.port)
        stop.wait()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="[%(asctime)s] %(levelname)s %(message)s")
    # The storage SDK logs every HTTP call at INFO; queue polling would drown the app's own logs.
    logging.getLogger("azure").setLevel(logging.WARNING)
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    app_dir: Path = args.app_dir.resolve()
    azurite: Azurite | None = None
    try:
        settings = read_local_settings(app_dir)
        apply_settings(settings.values)
        port = args.port or int(os.environ.get("PORT") or settings.local_http_port or DEFAULT_HTTP_PORT)
        azurite = ensure_development_storage(app_dir)
        code = _run_in_process(app_dir, args.host, port, stop)
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
