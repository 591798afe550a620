"""Indexing: the host hosts exactly what function_app.py declares, and refuses what it cannot run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devhost.indexing import IndexingError, index_app

SAMPLE_APP = Path(__file__).parent / "sample_app"


def test_sample_app_description_matches_its_declarations(declared: Callable[[Path], list[dict[str, Any]]]) -> None:
    index = index_app(SAMPLE_APP)
    described = [f.describe() for f in index.functions]
    assert described == declared(SAMPLE_APP)
    by_name = {d["name"]: d for d in described}
    assert by_name["save_item"] == {
        "name": "save_item",
        "trigger": "httpTrigger",
        "route": "items",
        "methods": ("POST", "PUT"),
    }
    assert by_name["plain_text"]["route"] == "text"
    assert by_name["boom"]["methods"] is None
    assert by_name["every_second"] == {
        "name": "every_second",
        "trigger": "timerTrigger",
        "schedule": "* * * * * *",
        "run_on_startup": False,
        "use_monitor": None,
    }
    assert by_name["async_record"]["connection"] == "Storage"
    assert {f.name for f in index.functions if f.is_async} == {"async_echo", "async_record"}
    assert by_name["files"]["route"] == "Files/{*path}"


def test_route_defaults_to_function_name(make_app: Callable[..., Path]) -> None:
    app_dir = make_app("""
        import azure.functions as func
        app = func.FunctionApp()

        @app.route()
        def hello(req: func.HttpRequest) -> func.HttpResponse:
            return func.HttpResponse("hi")
    """)
    (function,) = index_app(app_dir).functions
    assert (function.route, function.methods, function.auth_level) == ("hello", None, "function")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            """
            import azure.functions as func
            app = func.FunctionApp()

            @app.blob_trigger(arg_name="blob", path="c/{name}", connection="AzureWebJobsStorage")
            def on_blob(blob: func.InputStream) -> None: ...
            """,
            "trigger 'blobTrigger' is not supported",
        ),
        (
            """
            import azure.functions as func
            app = func.FunctionApp()

            @app.route(route="r")
            @app.table_input(arg_name="rows", table_name="t", connection="AzureWebJobsStorage")
            def read(req: func.HttpRequest, rows: str) -> func.HttpResponse: ...
            """,
            "binding 'rows' of type 'table' is not supported",
        ),
        (
            """
            import azure.functions as func
            app = func.FunctionApp()

            @app.route(route="r")
            @app.queue_output(arg_name="out", queue_name="q", connection="AzureWebJobsStorage")
            def send(req: func.HttpRequest, out: func.Out[str]) -> func.HttpResponse: ...
            """,
            "binding 'out' of type 'queue' is not supported",
        ),
        (
            """
            import azure.functions as func
            app = func.FunctionApp()

            @app.route(route="r")
            def read(req: func.HttpRequest, extra: str) -> func.HttpResponse: ...
            """,
            "do not match its bindings",
        ),
        (
            """
            import azure.functions as func
            app = func.FunctionApp()

            @app.route(route="r")
            def read(req: func.HttpRequest, context: func.Context) -> func.HttpResponse: ...
            """,
            "provides no 'context'",
        ),
        (
            """
            import azure.functions as func
            one = func.FunctionApp()
            two = func.FunctionApp()
            """,
            "2 FunctionApp instances",
        ),
        ("x = 1\n", "no FunctionApp instances"),
    ],
)
def test_unhostable_apps_fail_loudly(make_app: Callable[..., Path], source: str, message: str) -> None:
    with pytest.raises(IndexingError, match=message):
        index_app(make_app(source))


def test_missing_module_fails_loudly(tmp_path: Path) -> None:
    with pytest.raises(IndexingError, match="does not exist"):
        index_app(tmp_path)
