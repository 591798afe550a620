"""How many actions one process runs at once: in all, and per target host.

An action takes a slot of its target host (`host_of`: an HTTP origin, a storage account, a Service Bus
namespace), then one of the process, and holds both until its attempt ends. Waiting for a slot is a
coroutine waiting, not a thread: a herd queued behind a busy host costs memory only.

- `in_flight` (SCHEDULER_ACTIONS_IN_FLIGHT, default 6,000) bounds what one process keeps open: sockets,
  TLS state, buffers (about 40 KB an action, bench/memory.py: 240 MB at most). Actions are waits, not work, so
  it is far above the process's CPUs.
- `per_host` (SCHEDULER_ACTIONS_PER_HOST, default 3,000) keeps one host from taking every slot: a host
  that hangs until the 60 s deadline holds at most this many (half the process's), and actions for other
  hosts keep going. A herd of up to 3,000 jobs of one process at one host goes out at once (a herd gets its
  connections ready ahead of its second, executor/batch.py); a larger one goes out in waves as earlier
  attempts end, the second wave after the first's answers.

A host's slot is taken before the process's, so actions waiting for a busy host hold nothing the others
need. Slots belong to an event loop (each loop has its own), and a host's entry is dropped when no
action of it runs or waits, so the table follows the hosts in use, not every host ever called.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..model import JobActionType, JobErrorAction
from ..settings.app import DEFAULT_ACTIONS_IN_FLIGHT, DEFAULT_ACTIONS_PER_HOST, Settings


def host_of(action: JobErrorAction) -> str:
    """The target host an action's slot is counted against; every action of one host has the same."""
    if action.type in (JobActionType.HTTP, JobActionType.HTTPS) and action.request is not None:
        try:
            parts = urlsplit(action.request.uri)
            scheme = parts.scheme.lower()
            port = parts.port or (443 if scheme == "https" else 80)
            return f"{scheme}://{(parts.hostname or '').lower()}:{port}"
        except ValueError:  # a malformed port: the attempt fails at once, under one shared name
            return "http://invalid"
    if action.type == JobActionType.STORAGE_QUEUE and action.queue_message is not None:
        return f"storage://{action.queue_message.storage_account.lower()}"
    message = action.service_bus_queue_message or action.service_bus_topic_message
    if message is not None:
        return f"servicebus://{(message.namespace or '').lower()}"
    return action.type.value


@dataclass
class _Host:
    slots: asyncio.Semaphore
    users: int = 0  # actions running or waiting


@dataclass
class _Loop:
    total: asyncio.Semaphore
    hosts: dict[str, _Host] = field(default_factory=dict)
    running: int = 0


class ActionLimits:
    def __init__(self, in_flight: int = DEFAULT_ACTIONS_IN_FLIGHT, per_host: int = DEFAULT_ACTIONS_PER_HOST) -> None:
        self.in_flight = in_flight
        self.per_host = min(per_host, in_flight)
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Loop] = weakref.WeakKeyDictionary()

    @classmethod
    def from_settings(cls, settings: Settings) -> ActionLimits:
        return cls(settings.actions_in_flight, settings.actions_per_host)

    def _state(self) -> _Loop:
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            state = self._loops[loop] = _Loop(asyncio.Semaphore(self.in_flight))
        return state

    @contextlib.asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        """Hold a slot of `host` and one of the process while the block runs."""
        state = self._state()
        entry = state.hosts.get(host)
        if entry is None:
            entry = state.hosts[host] = _Host(asyncio.Semaphore(self.per_host))
        entry.users += 1
        try:
            async with entry.slots, state.total:
                state.running += 1
                try:
                    yield
                finally:
                    state.running -= 1
        finally:
            entry.users -= 1
            if entry.users == 0:
                del state.hosts[host]

    def running(self) -> int:
        """Actions holding a slot in the current event loop."""
        return self._state().running
