"""A stop signal (Ctrl-C, SIGTERM, SIGHUP), as a process's main loop sees it.

The handler only sets an attribute. Python runs a handler in the main thread between two bytecodes, which may be
inside `threading.Event.wait` while it holds the event's lock, and an `Event.set` from the handler then waited for
that lock forever (a local host that never stopped, seen once in a full test run). The main loop sleeps a little at
a time instead of waiting on a lock: the kernel hands a signal to any thread of the process, and the handler runs
only when the main thread next runs bytecode.
"""

from __future__ import annotations

import faulthandler
import time
from types import FrameType

# How often the main thread wakes, so that a handler of a signal the kernel gave another thread runs this soon.
SIGNAL_LOOK_SECONDS = 0.2


class StopRequest:
    """`grace`: seconds after the first signal at which every thread's stack goes to stderr and the process exits 1
    (what hung is then in the log); None: no such deadline."""

    def __init__(self, grace: float | None = None) -> None:
        self.grace = grace
        self.requested = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if not self.requested and self.grace is not None:
            faulthandler.dump_traceback_later(self.grace, exit=True)
        self.requested = True

    def wait(self) -> None:
        """Until a stop is requested."""
        while not self.requested:
            time.sleep(SIGNAL_LOOK_SECONDS)
