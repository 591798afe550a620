"""docs/architecture.md, "The way of one occurrence", stays true to the code: every file it lists exists, an earlier
file on the list imports it (directly, or through the package an earlier file imports), and one occurrence traced
from the minute tick to its history row, on the memory store, enters every one of them."""

from __future__ import annotations

import ast
import re
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any

from shared.clock import OffsetClock
from shared.private_targets import PrivateTargets
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store.memory import MemoryStorage
from shared.store.sealing import new_key_material
from tests.conftest import HttpTarget
from tests.support.scheduler_client import call, drain, make_collection, settle

ROOT = Path(__file__).resolve().parents[2]
STATION = re.compile(r"^\d+\. `([^`]+)`")


def _way() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The way of one occurrence", 1)[1].split("\n## ", 1)[0]
    return [match.group(1) for line in section.splitlines() if (match := STATION.match(line))]


def _module(path: str) -> str:
    dotted = path.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def _imported_by(path: str) -> set[str]:
    """The modules `path` imports, by absolute dotted name (relative imports resolved)."""
    module = _module(path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse((ROOT / path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _reaches(importers: list[str], target: str) -> bool:
    """Whether one of `importers` imports `target`, directly or through a package's __init__ it imports."""
    wanted = _module(target)
    seen: set[str] = set()
    frontier = [_module(path) for path in importers]
    while frontier:
        module = frontier.pop()
        if module in seen:
            continue
        seen.add(module)
        path = Path(*module.split("."))
        source = next((p for p in (path.with_suffix(".py"), path / "__init__.py") if (ROOT / p).exists()), None)
        if source is None:
            continue
        imported = _imported_by(source.as_posix())
        if wanted in imported:
            return True
        # Through a package only: a package's __init__ hands its modules on.
        frontier += [name for name in imported if (ROOT / Path(*name.split(".")) / "__init__.py").exists()]
    return False


def test_the_way_lists_files_that_exist_each_imported_by_one_before_it() -> None:
    way = _way()
    assert len(way) >= 20, way  # the section was found and read
    for path in way:
        assert (ROOT / path).is_file(), f"{path} is listed on the way but does not exist"
    for index, path in enumerate(way[1:], start=1):
        assert _reaches(way[:index], path), f"{path}: no file before it on the way imports it"


def test_one_occurrence_from_tick_to_history_enters_every_file_on_the_way(http_target: HttpTarget) -> None:
    # The runtime's clock is the real one shifted, so the tick can see the occurrence a minute ahead and the
    # executor still waits for its second in real time (a few seconds).
    clock = OffsetClock(timedelta(0))
    settings = Settings(
        storage=StorageSettings(),
        private_targets=PrivateTargets.parse("loopback"),
        secret_keys=new_key_material(),
        dispatch_spread=timedelta(0),
    )
    entered: set[str] = set()
    prefix = f"{ROOT}/"
    tracing = threading.Event()  # set from the tick on: the set-up's calls are not the occurrence's

    def profile(frame: FrameType, event: str, _: Any) -> None:
        if event == "call" and tracing.is_set():
            name = frame.f_code.co_filename
            if name.startswith(prefix):
                entered.add(name[len(prefix) :])

    # Before the runtime: a thread of its pool started earlier would not be seen.
    sys.setprofile(profile)
    threading.setprofile(profile)
    rt = Runtime.create(settings, clock, storage=MemoryStorage(clock))
    try:
        make_collection(rt)
        due = (datetime.now(UTC) + timedelta(minutes=4)).replace(second=0, microsecond=0)
        action = {"type": "Http", "request": {"uri": f"{http_target.url}/way", "method": "POST", "body": "x"}}
        job = {"properties": {"startTime": due.isoformat(), "recurrence": {"frequency": "Hour"}, "action": action}}
        assert call(rt, "Jobs_CreateOrUpdate", "PUT", "way", job).status == 201
        clock.offset = due - timedelta(seconds=50) - datetime.now(UTC)  # the tick that dispatches it
        tracing.set()
        try:
            rt.dispatcher.fan_out(spread=False)
            tasks = settle(rt)  # through the dispatch queue's trigger
            clock.offset = due - timedelta(seconds=2) - datetime.now(UTC)
            drain(rt, 30, until=lambda: len(http_target.requests) == 1)
        finally:
            tracing.clear()
        assert tasks >= 1
        assert len(http_target.requests) == 1
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        rt.close()
    # The host's entry and the wiring are not called here: the test plays the timer and the triggers on a runtime
    # it built.
    missing = [path for path in _way() if path not in ("function_app.py", "shared/runtime.py") and path not in entered]
    assert not missing, f"listed on the way but not entered by an occurrence: {missing}"
    assert "shared/executor/recorder.py" in entered  # the trace saw the end of the way
