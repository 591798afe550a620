"""A stop signal reaches the main loop (devhost/stop_request.py): the handler, run in the main thread while the loop
sleeps, only sets the request, and the loop ends within a wake of it; a second signal changes nothing."""

from __future__ import annotations

import os
import signal
import threading
import time

from devhost.stop_request import SIGNAL_LOOK_SECONDS, StopRequest


def test_a_signal_sent_while_the_main_loop_waits_ends_the_wait() -> None:
    stop = StopRequest()
    before = signal.signal(signal.SIGUSR1, stop.handle)
    try:
        sender = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGUSR1))  # from another thread, as a kernel may
        began = time.monotonic()
        sender.start()
        stop.wait()
        took = time.monotonic() - began
        sender.join()
        assert stop.requested
        assert 0.3 <= took < 0.3 + SIGNAL_LOOK_SECONDS + 2.0, took  # room for a busy machine
        stop.handle(signal.SIGUSR1, None)  # a second signal: still requested, nothing else
        assert stop.requested
    finally:
        signal.signal(signal.SIGUSR1, before)
