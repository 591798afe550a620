"""Which Azurite `python -m devhost` uses for development storage, and the rule that keeps hosts apart.

Contract:
- Development storage (AzureWebJobsStorage unset or "UseDevelopmentStorage=true") is an Azurite on
  10000-10002, or on DEVHOST_AZURITE_PORTS=blob,queue,table, with its data in `<app-dir>/.local/azurite`
  (`.local/azurite-<blob port>` for other ports, so two hosts of one checkout never share a data folder).
- A host starts its own Azurite when those ports are free. It never shares one silently: ports held by an
  Azurite it did not start are refused (`StorageRefused`, one line naming DEVHOST_AZURITE_PORTS with free
  ports that give this host its own), except the reusable Azurite `python -m devhost.azurite` runs for this
  checkout (its marker in the data folder, devhost/azurite.py), which is reused with one INFO line. To share
  storage on purpose, set AzureWebJobsStorage to that Azurite's connection string.
- `way_out(port, plan)` is the command that gives a host a separate, working setup: a free HTTP port when
  `port` is taken, and free Azurite ports when the plan would be refused.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from devhost.azurite import AzuritePorts, running_here
from devhost.settings import DEFAULT_CONNECTION, DEVELOPMENT_STORAGE

STANDARD_PORTS = AzuritePorts(blob=10000, queue=10001, table=10002)
PORTS_SETTING = "DEVHOST_AZURITE_PORTS"
DEFAULT_HTTP_PORT = 7071


class StorageRefused(Exception):
    """Development storage this host must not use or cannot start: one line for the user, with the way out."""


def bindable(port: int, host: str = "127.0.0.1") -> bool:
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


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def azurite_ports() -> AzuritePorts:
    """10000-10002, or DEVHOST_AZURITE_PORTS=blob,queue,table."""
    configured = os.environ.get(PORTS_SETTING, "").strip()
    if not configured:
        return STANDARD_PORTS
    try:
        blob, queue, table = (int(p) for p in configured.split(","))
    except ValueError:
        raise StorageRefused(
            f"error: {PORTS_SETTING}={configured!r} must be three ports blob,queue,table, e.g. "
            f"{PORTS_SETTING}=10003,10004,10005"
        ) from None
    return AzuritePorts(blob=blob, queue=queue, table=table)


def data_location(app_dir: Path, ports: AzuritePorts) -> Path:
    suffix = "" if ports == STANDARD_PORTS else f"-{ports.blob}"
    return app_dir / ".local" / f"azurite{suffix}"


@dataclass(frozen=True)
class StoragePlan:
    ports: AzuritePorts
    location: Path
    action: Literal["start", "reuse", "refuse"]
    taken_by: str = ""  # for "refuse": who holds the ports


def plan_development_storage(app_dir: Path) -> StoragePlan | None:
    """What the host will do for storage; None when AzureWebJobsStorage names real storage (no Azurite)."""
    current = os.environ.get(DEFAULT_CONNECTION)
    if current is not None and current.strip().lower() != DEVELOPMENT_STORAGE.lower():
        return None
    ports = azurite_ports()
    location = data_location(app_dir, ports)
    held = [p for p in (ports.blob, ports.queue, ports.table) if _listening(p)]
    if not held:
        return StoragePlan(ports, location, "start")
    if len(held) < 3:
        return StoragePlan(ports, location, "refuse", f"another program (on {', '.join(map(str, held))})")
    marker = running_here(location, ports)
    if marker is not None and marker.get("reusable"):
        return StoragePlan(ports, location, "reuse")
    whom = (
        "the Azurite of another `make run` of this checkout"
        if marker is not None
        else "an Azurite this checkout did not start (another checkout's `make run`?)"
    )
    return StoragePlan(ports, location, "refuse", whom)


def _free_triple(start: int) -> AzuritePorts:
    for blob in range(start, start + 300, 3):
        if blob + 2 < 65536 and all(bindable(p) and not _listening(p) for p in (blob, blob + 1, blob + 2)):
            return AzuritePorts(blob, blob + 1, blob + 2)
    raise StorageRefused(f"error: no three free ports from {start} on for Azurite: set {PORTS_SETTING}")


def way_out(port: int, plan: StoragePlan | None, http_free: bool = True) -> str:
    """`[PORT=n] [DEVHOST_AZURITE_PORTS=a,b,c] make run`: a separate, working setup from where this one fails."""
    parts = []
    if not http_free:
        parts.append(f"PORT={next(p for p in range(port + 1, port + 200) if bindable(p))}")
    elif port != DEFAULT_HTTP_PORT:
        parts.append(f"PORT={port}")
    if plan is not None and plan.action == "refuse":
        parts.append(f"{PORTS_SETTING}={_free_triple(max(plan.ports.table, STANDARD_PORTS.table) + 1)}")
    return " ".join([*parts, "make run"])


def refusal(plan: StoragePlan, port: int) -> StorageRefused:
    if plan.taken_by.startswith("another program"):
        return StorageRefused(
            f"error: Azurite cannot start on ports {plan.ports}: taken by {plan.taken_by}. Free them, or move "
            f"Azurite: {way_out(port, plan)}"
        )
    return StorageRefused(
        f"error: Azurite's ports {plan.ports} are taken by {plan.taken_by}; this host does not share storage "
        f"(jobs and queues) it did not start. Stop that one, or run this host with its own: {way_out(port, plan)}"
    )
