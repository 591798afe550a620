"""The project's own function_app.py, indexed by the local host: it must host exactly what the app declares.

function_app.py is part of the repository (the app's only entry point), so this runs in every checkout and
fails, rather than skips, if the file is missing or cannot be indexed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devhost.indexing import index_app
from devhost.settings import read_local_settings

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PROJECT_APP = PROJECT_ROOT / "function_app.py"


def test_project_app_is_hosted_exactly_as_declared(
    declared: Callable[[Path], list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert PROJECT_APP.is_file(), f"{PROJECT_APP} is missing"
    # The app may read settings at import; give it its local settings (or the sample's) without writing files.
    for name, value in read_local_settings(PROJECT_ROOT, create=False).values.items():
        if name not in os.environ:
            monkeypatch.setenv(name, value)
    hosted = [f.describe() for f in index_app(PROJECT_ROOT).functions]
    assert hosted == declared(PROJECT_ROOT)
    assert hosted, "the project app declares no functions"
