"""The operation table (shared/api/operations.py) is the one list of the API's operations: function_app.py binds
exactly its routes with its methods, every operation has a handler or is answered by `api.handle` itself, and
the OpenAPI document holds exactly its documented operations."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from devhost.indexing import index_app
from devhost.settings import read_local_settings
from shared.api import openapi_document
from shared.api.operations import HANDLERS, OPERATIONS, routes

ROOT = Path(__file__).resolve().parents[2]


def test_function_app_binds_exactly_the_tables_routes(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in read_local_settings(ROOT, create=False).values.items():
        if name not in os.environ:
            monkeypatch.setenv(name, value)
    bound = {
        f.route: set(f.methods or ())
        for f in index_app(ROOT).functions
        if f.route is not None and not f.route.startswith("console")
    }
    assert bound == {route: set(methods) for route, methods in routes().items()}


def test_every_operation_is_served() -> None:
    answered_by_handle = {"OpenApi_Get", "Health_Get"}
    assert {op.name for op in OPERATIONS} == set(HANDLERS) | answered_by_handle
    assert len({(op.route, op.method) for op in OPERATIONS}) == len(OPERATIONS)  # one operation per route+method


def test_the_openapi_document_lists_the_fifteen_scheduler_operations() -> None:
    document = openapi_document()
    listed = {
        (path, method.upper(), op["operationId"])
        for path, methods in document["paths"].items()
        for method, op in methods.items()
    }
    assert listed == {(op.path, op.method, op.name) for op in OPERATIONS if op.documented}
    assert len(listed) == 15
