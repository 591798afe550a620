"""The host process's policy for CPython's cyclic garbage collector: young work dies young, the startup heap is
never walked again.

Why: reference counting frees nearly everything the scheduler makes; the cyclic collector only finds cycles. With
CPython's default thresholds (700, 10, 10) it cost more CPU than any step of an execution under load: at a steady
300 executions/s (bench/steady.py, two worker processes on 2 cores) it took a third of a worker's perf samples
(`gc_collect_main` and its visitors) and, timed by gc.callbacks, 7-8 s of every 20 s. The work in flight (batches
waiting for their second, storage calls, exchanges) lives from milliseconds to seconds, long enough to survive a
young collection made every 700 allocations, so it is promoted to the oldest generation and dies there; each
quarter of that generation so promoted starts a full collection, which walks the whole heap again (450,000-650,000
objects under that load, the imported SDKs included; about 0.7 s each, 8 in 20 s).

`settle()`, once the app's modules are imported (function_app.py):
- the heap made so far (modules, classes, the SDKs' tables) moves out of the collector's reach (`gc.freeze`): it
  lives as long as the process, and a full collection no longer walks it;
- the young generation is collected every `YOUNG_THRESHOLD` allocations instead of 700, so what an execution makes
  is freed (by reference counting, or by a young collection that finds its cycles) before it can be promoted. A
  young collection walks only the young objects still alive, so it costs about the same, made far less often.
"""

from __future__ import annotations

import gc

# Allocations (less deallocations) of tracked objects between young collections; CPython's default is 700. Measured
# under a steady 300 executions/s: about 35,000 a second per worker process, so a young collection every second or so.
YOUNG_THRESHOLD = 50_000
# How many collections of a generation before the next one is collected too: CPython's defaults.
MIDDLE_THRESHOLD = 10
OLD_THRESHOLD = 10


def settle() -> None:
    """Apply the policy to this process. A second call (a test process that imports the app again) also freezes
    what was made since; the thresholds stay."""
    gc.collect()  # garbage of the imports is freed, not frozen
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)
