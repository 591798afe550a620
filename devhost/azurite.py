"""Start and stop a real Azurite (npm) for local runs and the test session.

Azurite is installed by `make` into `.local/npm` (pinned 3.35.0: newer releases need Node 21+). This
module only launches it: it never downloads anything, because machines here reach no CDN.

A started Azurite leaves `azurite.json` in its data folder while it runs (its pid, ports, and whether other
hosts may reuse it), so `python -m devhost` can tell its own checkout's Azurite from anyone else's
(`running_here`); stop() removes it, and a marker whose process is gone counts for nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shared.settings.storage import DEVELOPMENT_ACCOUNT_KEY, DEVELOPMENT_ACCOUNT_NAME

REPO_ROOT = Path(__file__).resolve().parents[1]
AZURITE_BIN = REPO_ROOT / ".local" / "npm" / "node_modules" / ".bin" / "azurite"
KEEP_ALIVE_SECONDS = 300  # how long Azurite keeps an idle connection open
# Preloaded into Azurite: entities found by their keys, a partition's by a query, and an entity replaced in its place,
# in time that does not grow with the partition or the table (the file says why).
KEYED_LOOKUPS = Path(__file__).with_name("azurite_lookups.js")
MARKER = "azurite.json"

# The well-known development account every Azure SDK accepts against Azurite (not a secret): shared's.
ACCOUNT_NAME = DEVELOPMENT_ACCOUNT_NAME
ACCOUNT_KEY = DEVELOPMENT_ACCOUNT_KEY


def _with_keyed_lookups(environment: Mapping[str, str]) -> dict[str, str]:
    """The environment Azurite runs in: this one, with azurite_lookups.js preloaded (quoted: a path may hold spaces)."""
    options = environment.get("NODE_OPTIONS", "")
    return {**environment, "NODE_OPTIONS": f'{options} --require "{KEYED_LOOKUPS}"'.strip()}


_PR_SET_PDEATHSIG = 1


def _dies_with_parent() -> Callable[[], None] | None:
    """A preexec_fn that has the kernel send SIGTERM to the child when the process that started it dies, even
    by SIGKILL (Linux), so a killed host never leaves Azurite behind. The libc function is looked up here, in
    the parent: after a fork the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)

    return arm


def free_port() -> int:
    """A TCP port that was free a moment ago on the loopback interface."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` distinct TCP ports that were free a moment ago on the loopback interface: their sockets are held open
    together while chosen, so none is handed out twice (`free_port` called three times could, and an Azurite given
    one port for two services exits with EADDRINUSE). They are drawn below the system's ephemeral range: a port the
    system picks (bind to 0) comes from that range, where any outgoing connection may take it before the server it
    was chosen for binds it (a full test run, thousands of connections to Azurite a minute, did)."""
    below = _first_ephemeral()
    with contextlib.ExitStack() as held:
        chosen: list[int] = []
        while len(chosen) < count:
            s = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            port = _random.randrange(_FIRST_CHOSEN, below)
            try:
                s.bind(("127.0.0.1", port))  # fails for one already chosen: its socket is still held
            except OSError:
                continue
            chosen.append(port)
        return chosen


_FIRST_CHOSEN = 20000  # above the well-known local ports (Azurite's 10000-10002, the Functions host's 7071)
_random = random.SystemRandom()


def _first_ephemeral() -> int:
    """The start of /proc/sys/net/ipv4/ip_local_port_range (32768 unless changed; elsewhere, 32768 too, the range's
    usual start on Linux), at least 1000 ports above _FIRST_CHOSEN."""
    try:
        first = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        first = 32768
    return max(first, _FIRST_CHOSEN + 1000)


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass(frozen=True)
class AzuritePorts:
    blob: int
    queue: int
    table: int

    def __str__(self) -> str:
        return f"{self.blob},{self.queue},{self.table}"

    @property
    def connection_string(self) -> str:
        base = f"http://127.0.0.1:{{}}/{ACCOUNT_NAME}"
        return (
            f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT_NAME};AccountKey={ACCOUNT_KEY};"
            f"BlobEndpoint={base.format(self.blob)};QueueEndpoint={base.format(self.queue)};"
            f"TableEndpoint={base.format(self.table)};"
        )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def running_here(location: Path, ports: AzuritePorts) -> dict[str, object] | None:
    """The marker of the Azurite that runs with its data in `location` on exactly `ports`, if one does."""
    try:
        marker = json.loads((location / MARKER).read_text())
        pid = int(marker["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if marker.get("ports") != [ports.blob, ports.queue, ports.table] or not _alive(pid):
        return None
    return dict(marker)


class Azurite:
    """A running Azurite process; use as a context manager or call start()/stop().

    `location` holds its data (kept across runs for `make run`, a temporary folder for tests). `reusable`:
    other hosts of this checkout may use it (`python -m devhost.azurite`); a host's own Azurite is not.
    """

    def __init__(
        self, location: Path, ports: AzuritePorts | None = None, in_memory: bool = False, reusable: bool = False
    ) -> None:
        self.location = location
        self.ports = ports or AzuritePorts(*free_ports(3))
        self.in_memory = in_memory
        self.reusable = reusable
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def connection_string(self) -> str:
        return self.ports.connection_string

    @property
    def pid(self) -> int | None:
        """Azurite's process (Node itself: the launcher is a script Node runs in place); None before start."""
        return None if self._process is None else self._process.pid

    def start(self, timeout: float = 30.0) -> Azurite:
        executable = str(AZURITE_BIN) if AZURITE_BIN.exists() else shutil.which("azurite")
        if executable is None:
            raise RuntimeError("Azurite is not installed: run `make setup` (npm install of azurite@3.35.0)")
        self.location.mkdir(parents=True, exist_ok=True)
        args = [
            executable,
            "--silent",
            "--disableTelemetry",
            "--skipApiVersionCheck",
            "--loose",
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(self.ports.blob),
            "--queueHost",
            "127.0.0.1",
            "--queuePort",
            str(self.ports.queue),
            "--tableHost",
            "127.0.0.1",
            "--tablePort",
            str(self.ports.table),
        ]
        # Real storage keeps an idle connection for minutes; Azurite closes it after 5 s. A client reusing a
        # connection idle about that long races the close and loses its request ("Connection aborted:
        # RemoteDisconnected"), and azure-core does not retry a POST (an entity-group transaction, a queue
        # send) that way: under bursts every few seconds, a claim transaction lost so redelivered its batch
        # 10 s late. Local figures would show a fault the service does not have.
        for service in ("blob", "queue", "table"):
            args += [f"--{service}KeepAliveTimeout", str(KEEP_ALIVE_SECONDS)]
        # Azurite refuses --location together with --inMemoryPersistence; the folder still holds the log.
        args += ["--inMemoryPersistence"] if self.in_memory else ["--location", str(self.location)]
        log = open(self.location / "azurite.log", "ab")  # noqa: SIM115 - owned by the child for its lifetime
        # Its own session: Ctrl-C in the terminal reaches the host, which stops Azurite after the app.
        self._process = subprocess.Popen(
            args,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_dies_with_parent(),
            env=_with_keyed_lookups(os.environ),
        )
        log.close()
        deadline = time.monotonic() + timeout
        ports = (self.ports.blob, self.ports.queue, self.ports.table)
        while not all(_port_open(p) for p in ports):
            if self._process.poll() is not None:
                log_file = self.location / "azurite.log"
                raise RuntimeError(f"Azurite exited with {self._process.returncode}; see {log_file}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("Azurite did not open its ports in time")
            time.sleep(0.1)
        marker = {"pid": self._process.pid, "ports": [self.ports.blob, self.ports.queue, self.ports.table]}
        (self.location / MARKER).write_text(json.dumps({**marker, "reusable": self.reusable}))
        return self

    def stop(self) -> None:
        if self._process is None:
            return
        marker = running_here(self.location, self.ports)
        if marker is not None and marker.get("pid") == self._process.pid:
            with contextlib.suppress(OSError):
                (self.location / MARKER).unlink()
        if self._process.poll() is not None:
            return
        os.killpg(self._process.pid, 15)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self._process.pid, 9)
            self._process.wait()

    def __enter__(self) -> Azurite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    """`python -m devhost.azurite`: Azurite on the standard ports with data in .local/azurite, until Ctrl-C (for
    `func start`); a `make run` of this checkout reuses it, no other checkout's does."""
    import signal

    azurite = Azurite(REPO_ROOT / ".local" / "azurite", AzuritePorts(10000, 10001, 10002), reusable=True).start()
    print(azurite.connection_string, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: azurite.stop())
    try:
        assert azurite._process is not None
        azurite._process.wait()
    except KeyboardInterrupt:
        azurite.stop()


if __name__ == "__main__":
    main()
