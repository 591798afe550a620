"""What the Functions host asks a key for, as function_app.py declares it: with SCHEDULER_AUTH=key every
management route needs a key, while the health probe, the OpenAPI documents and the console's shell stay
anonymous (the console's own calls go through the API, with the caller's key or token)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import azure.functions as func
import pytest

ROOT = Path(__file__).resolve().parents[2]
ANONYMOUS_ROUTES = {"health", "openapi.json", "openapi-2026-12-01-preview.json", "console", "console/{*path}"}


def _auth_levels() -> dict[str, str]:
    spec = importlib.util.spec_from_file_location("auth_levels_function_app", ROOT / "function_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    app = next(v for v in vars(module).values() if isinstance(v, func.FunctionRegister))
    levels = {}
    for function in app.get_functions():
        trigger = function.get_trigger().get_dict_repr()
        if trigger["type"] == "httpTrigger":
            levels[trigger["route"]] = str(trigger["authLevel"]).rsplit(".", 1)[-1].lower()
    return levels


@pytest.mark.parametrize("mode, api_level", [("key", "function"), ("entra", "anonymous"), ("none", "anonymous")])
def test_only_the_management_routes_need_a_key_and_only_in_key_mode(monkeypatch, mode: str, api_level: str) -> None:
    monkeypatch.setenv("SCHEDULER_AUTH", mode)
    levels = _auth_levels()
    assert set(levels) >= ANONYMOUS_ROUTES
    for route, level in levels.items():
        assert level == ("anonymous" if route in ANONYMOUS_ROUTES else api_level), (route, level)
