"""Driving code on a ManualClock (shared/manual_clock.py) from a test: the clock's time moves only when the test
moves it; real time only lets the code's threads and event loops run, never lets the clock's time pass.

- `until(condition, within)`: whether `condition` holds within `within` seconds of real time.
- `step_until(clock, condition)`: the clock advanced in small steps, threads let run after each, until `condition`
  holds: what takes an executor through its short gathering windows up to the moment a test watches. The steps
  stop as soon as it holds, so no clock time passes after it.
- `runtime_in_memory(clock)`: a Runtime on the memory store on that clock (no Azurite, no account), closed after.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from shared.manual_clock import ManualClock
from shared.private_targets import PrivateTargets
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store.memory import MemoryStorage
from shared.store.sealing import new_key_material

RUN = 0.02  # real seconds a step lets threads run


def until(condition: Callable[[], bool], within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def step_until(clock: ManualClock, condition: Callable[[], bool], step: float = 0.05, most: int = 200) -> None:
    for _ in range(most):
        time.sleep(RUN)
        if condition():
            return
        clock.advance(step)
    raise AssertionError(f"not reached within {most} steps of {step} s")


@contextmanager
def runtime_in_memory(clock: ManualClock) -> Iterator[Runtime]:
    settings = Settings(
        storage=StorageSettings(),  # no account: nothing may reach for one
        private_targets=PrivateTargets.parse("loopback"),  # the tests' targets listen on loopback
        secret_keys=new_key_material(),
        dispatch_spread=timedelta(0),
    )
    rt = Runtime.create(settings, clock, storage=MemoryStorage(clock))
    try:
        yield rt
    finally:
        rt.close()
