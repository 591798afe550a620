"""HTTP triggers over real HTTP against the sample app hosted in-process."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
import requests

from devhost.host import LocalHost


def get_json(url: str, **kwargs: object) -> dict:
    response = requests.get(url, timeout=10, **kwargs)  # type: ignore[arg-type]
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "application/json"
    return response.json()


def test_base_url(sample_host: LocalHost) -> None:
    assert sample_host.base_url == f"http://127.0.0.1:{sample_host.port}/api"


def test_route_params_query_and_url(sample_host: LocalHost) -> None:
    seen = get_json(f"{sample_host.base_url}/items/a%20b?x=1&x=2&y=z")
    assert seen["function"] == "get_item"
    assert seen["method"] == "GET"
    assert seen["route_params"] == {"id": "a b"}
    assert seen["params"] == {"x": "1,2", "y": "z"}
    assert seen["url"] == f"{sample_host.base_url}/items/a%20b?x=1&x=2&y=z"


def test_literal_segments_are_case_insensitive_and_beat_parameters(sample_host: LocalHost) -> None:
    assert get_json(f"{sample_host.base_url}/ITEMS/Special")["function"] == "special_item"
    assert get_json(f"{sample_host.base_url.replace('/api', '/API')}/items/7")["function"] == "get_item"


def test_body_headers_methods_and_response_headers(sample_host: LocalHost) -> None:
    assert sample_host.keys is not None  # save_item is declared ADMIN
    response = requests.put(
        f"{sample_host.base_url}/items",
        data=b'{"name": "x"}',
        timeout=10,
        headers={"X-Test": "one", "Content-Type": "application/json", "x-functions-key": sample_host.keys.master_key},
    )
    assert response.status_code == 201
    assert response.headers["Location"] == "/api/items/1"
    seen = response.json()
    assert (seen["function"], seen["method"], seen["body"]) == ("save_item", "PUT", '{"name": "x"}')
    assert seen["headers"]["x-test"] == "one"


def test_method_not_declared_is_404_like_the_host(sample_host: LocalHost, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="devhost")
    assert requests.delete(f"{sample_host.base_url}/items", timeout=10).status_code == 404
    assert any("route exists for POST, PUT only" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("path", "route_params"),
    [("files/a/b%20c/d.txt", {"path": "a/b c/d.txt"}), ("FILES", {}), ("Files/", {})],
)
def test_catch_all(sample_host: LocalHost, path: str, route_params: dict[str, str]) -> None:
    seen = get_json(f"{sample_host.base_url}/{path}")
    assert (seen["function"], seen["route_params"]) == ("files", route_params)


@pytest.mark.parametrize("path", ["nothing/here", "items/1/2", "items//2"])
def test_unmatched_routes_are_404(sample_host: LocalHost, path: str) -> None:
    assert requests.get(f"{sample_host.base_url}/{path}", timeout=10).status_code == 404


def test_route_prefix_is_required(sample_host: LocalHost) -> None:
    assert requests.get(f"http://127.0.0.1:{sample_host.port}/items/1", timeout=10).status_code == 404


def test_default_and_declared_mimetype_charset(sample_host: LocalHost) -> None:
    text = requests.get(f"{sample_host.base_url}/text", timeout=10)
    assert (text.status_code, text.headers["Content-Type"], text.text) == (
        200,
        "text/plain; charset=utf-8",
        "plain hello",
    )
    html = requests.get(f"{sample_host.base_url}/html", timeout=10)
    assert html.headers["Content-Type"] == "text/html; charset=latin-1"
    assert html.headers["X-Sample"] == "yes"
    assert html.content == "<p>caf\u00e9</p>".encode("latin-1")


def test_async_function(sample_host: LocalHost) -> None:
    assert get_json(f"{sample_host.base_url}/async/xyz") == {"value": "xyz"}


def test_exception_is_a_generic_500_with_traceback_only_in_the_log(
    sample_host: LocalHost, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="devhost")
    response = requests.post(f"{sample_host.base_url}/boom", timeout=10)
    assert response.status_code == 500
    assert "secret detail" not in response.text and "Traceback" not in response.text
    failures = [r for r in caplog.records if r.levelno == logging.ERROR and "Functions.boom" in r.getMessage()]
    assert failures and failures[0].exc_info is not None
    assert "secret detail" in str(failures[0].exc_info[1])
    access = [r.getMessage() for r in caplog.records if r.name == "devhost.http_server"]
    assert any('"POST /api/boom" 500' in line for line in access)


def test_an_admin_route_needs_the_master_key(sample_host: LocalHost) -> None:
    # save_item is declared ADMIN: checked as in Azure (unlike `func start`), before the function runs.
    assert sample_host.keys is not None
    refused = requests.post(f"{sample_host.base_url}/items", timeout=10)
    assert (refused.status_code, refused.content) == (401, b"")
    function_key = {"x-functions-key": sample_host.keys.function_key}
    assert requests.post(f"{sample_host.base_url}/items", headers=function_key, timeout=10).status_code == 401
    master = requests.post(f"{sample_host.base_url}/items", params={"code": sample_host.keys.master_key}, timeout=10)
    assert master.status_code == 201


def test_concurrent_requests(sample_host: LocalHost) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        codes = list(
            pool.map(lambda i: requests.get(f"{sample_host.base_url}/async/{i}", timeout=10).status_code, range(24))
        )
    assert codes == [200] * 24


def test_custom_route_prefix_and_bad_return_type(make_app: Callable[..., Path], storage_env: str) -> None:
    app_dir = make_app(
        """
        import azure.functions as func
        app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)

        @app.route(route="{*everything}")
        def root(req: func.HttpRequest) -> func.HttpResponse:
            return func.HttpResponse(req.route_params.get("everything", "<root>"))

        @app.route(route="bad")
        def bad(req: func.HttpRequest) -> func.HttpResponse:
            return {"not": "a response"}
        """,
        host_json={"version": "2.0", "extensions": {"http": {"routePrefix": ""}}},
    )
    with LocalHost(app_dir) as host:
        assert host.base_url == f"http://127.0.0.1:{host.port}"
        assert requests.get(f"{host.base_url}/", timeout=10).text == "<root>"
        assert requests.get(f"{host.base_url}/x/y", timeout=10).text == "x/y"
        assert requests.get(f"{host.base_url}/bad", timeout=10).status_code == 500
