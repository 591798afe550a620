"""The host process's garbage-collector policy (shared/collector.py), each check in a fresh interpreter: the policy is
process-wide, and this test process's own collector must not decide the answer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from shared.collector import MIDDLE_THRESHOLD, OLD_THRESHOLD, YOUNG_THRESHOLD

REPO = Path(__file__).resolve().parents[2]


def _run(probe: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "APPLICATIONINSIGHTS"))}
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_importing_the_app_settles_the_collector() -> None:
    before, threshold, frozen = _run(
        "import gc; print(gc.get_threshold()[0]); import function_app;"
        "print(','.join(map(str, gc.get_threshold()))); print(gc.get_freeze_count())"
    )
    assert int(before) != YOUNG_THRESHOLD  # the interpreter's default: the app's import is what changes it
    assert threshold == f"{YOUNG_THRESHOLD},{MIDDLE_THRESHOLD},{OLD_THRESHOLD}"
    assert int(frozen) > 50_000  # the imported SDKs, out of every later collection's walk


def _cycle_freed_after(allocations: int) -> bool:
    """In a settled interpreter: is a two-object cycle, dropped, freed once `allocations` young objects follow?"""
    (freed,) = _run(
        "import weakref\n"
        "from shared import collector\n"
        "collector.settle()\n"
        "class Node: pass\n"
        "a, b = Node(), Node(); a.other, b.other = b, a\n"
        "gone = weakref.ref(a); del a, b\n"
        f"kept = [[] for _ in range({allocations})]\n"
        "print(gone() is None)"
    )
    return freed == "True"


def test_settled_work_that_forms_a_cycle_is_still_freed_without_being_asked() -> None:
    # The collector runs on its own: enough young allocations after a cycle dies free it.
    assert _cycle_freed_after(2 * YOUNG_THRESHOLD)


def test_a_cycle_is_not_freed_before_the_young_threshold() -> None:
    # The other side of the same promise: the young generation is not collected at CPython's 700 any more.
    assert not _cycle_freed_after(YOUNG_THRESHOLD // 10)
