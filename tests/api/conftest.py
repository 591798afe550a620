"""Fixtures of the API tests: a real HTTP server in front of `shared.api.handle`, and the official client.

`api_server` is a werkzeug WSGI server started once per session whose routes mirror function_app.py
(path template -> operation name, then `api.handle(operation, ApiRequest)`); each test points it at its
own runtime (own tables), so tests stay isolated while sharing one listening socket.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from azure.core.credentials import AccessToken
from azure.core.pipeline.policies import SansIOHTTPPolicy
from azure.mgmt.scheduler import SchedulerManagementClient
from werkzeug.routing import Map, Rule
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from shared import api
from shared.api.operations import routes
from shared.runtime import Runtime
from shared.store.memory import MemoryStorage
from shared.store.storage import Storage
from tests.support.scheduler_client import api_call, encoded

SUB, RG = "sub-api", "rg-api"
V = {"api-version": "2016-03-01"}

# The operation table's routes (the same as function_app.py's), in werkzeug's syntax under /api.
ROUTES: dict[str, dict[str, str]] = {
    "/api/" + re.sub(r"\{(\w+)\}", r"<\1>", route): methods for route, methods in routes().items()
}


@dataclass
class ApiServer:
    url: str = ""  # base URL, ".../api"
    runtime: Runtime | None = None
    calls: list[tuple[str, int]] = field(default_factory=list)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        adapter = _MAP.bind_to_environ(environ)
        try:
            endpoint, route = adapter.match()
        except Exception:  # werkzeug's NotFound/MethodNotAllowed: the host answers 404
            return Response(status=404)(environ, start_response)
        operation = ROUTES[endpoint].get(request.method)
        if operation is None:
            return Response(status=404)(environ, start_response)
        answer = api.handle(
            operation,
            api.ApiRequest(
                method=request.method,
                url=request.url,
                route=dict(route),
                query=dict(request.args.items()),
                body=request.get_data(),
                headers=dict(request.headers.items()),
            ),
            self.runtime,
        )
        self.calls.append((operation, answer.status))
        body = answer.encoded()
        headers = dict(answer.headers)
        if body:
            headers["Content-Type"] = "application/json; charset=utf-8"
        return Response(body, status=answer.status, headers=headers)(environ, start_response)


_MAP = Map(
    [Rule(path, endpoint=path, methods=list(methods)) for path, methods in ROUTES.items()],
    strict_slashes=False,
    merge_slashes=False,
)


@pytest.fixture(scope="session")
def _server() -> Iterator[ApiServer]:
    app = ApiServer()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    app.url = f"http://127.0.0.1:{server.server_port}/api"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield app
    server.shutdown()


@pytest.fixture
def api_server(_server: ApiServer, runtime: Runtime) -> Iterator[ApiServer]:
    """The session's server, serving this test's runtime."""
    _server.runtime, _server.calls = runtime, []
    yield _server
    _server.runtime = None


class AllowHttp(SansIOHTTPPolicy):
    """The bearer policy refuses plain http unless the request context says otherwise."""

    def on_request(self, request: Any) -> None:
        request.context["enforce_https"] = False


class StaticCredential:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("test-token", int(time.time()) + 3600)


def sdk_client(base_url: str, subscription: str = SUB) -> SchedulerManagementClient:
    return SchedulerManagementClient(
        StaticCredential(),
        subscription,
        base_url=base_url,
        per_call_policies=[AllowHttp()],
        retry_total=0,
        polling_interval=0,
    )


@pytest.fixture
def _sdk_factory() -> Any:
    return sdk_client


@pytest.fixture
def client(api_server: ApiServer) -> SchedulerManagementClient:
    """The official azure-mgmt-scheduler client, unchanged, against the test server."""
    return sdk_client(api_server.url)


class InProcess:
    """In-process API calls, built like function_app.py builds them, against one test's runtime."""

    SUB, RG = SUB, RG

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def call(
        self,
        operation: str,
        method: str,
        collection: str | None = None,
        job: str | None = None,
        body: Any = None,
        query: dict[str, str] | None = None,
        raw: bytes | None = None,
        subscription: str = SUB,
        group: str = RG,
        suffix: str = "",
    ) -> api.ApiResponse:
        in_group = collection is not None or operation == "JobCollections_ListByResourceGroup"
        return api_call(
            self.rt,
            operation,
            method,
            subscription=subscription,
            group=group if in_group else None,
            collection=collection,
            job=job,
            data=encoded(body, raw),
            query=query,
            suffix=suffix,
        )

    def put_collection(
        self, name: str = "jc", sku: str = "Standard", expect: int = 201, subscription: str = SUB, **properties: Any
    ) -> api.ApiResponse:
        response = self.call(
            "JobCollections_CreateOrUpdate",
            "PUT",
            name,
            subscription=subscription,
            body={"location": "westus", "properties": {"sku": {"name": sku}, **properties}},
        )
        assert response.status == expect, response.body
        return response

    def put_job(self, collection: str, name: str, body: dict[str, Any], expect: int | None = 201) -> api.ApiResponse:
        response = self.call("Jobs_CreateOrUpdate", "PUT", collection, name, body=body)
        if expect is not None:
            assert response.status == expect, response.body
        return response

    def get_job(self, collection: str, name: str) -> api.ApiResponse:
        return self.call("Jobs_Get", "GET", collection, name)

    @staticmethod
    def http_job(url: str = "http://127.0.0.1:9/hook", **properties: Any) -> dict[str, Any]:
        return {"properties": {"action": {"type": "Http", "request": {"uri": url, "method": "GET"}}, **properties}}


@pytest.fixture
def inproc(runtime: Runtime) -> InProcess:
    return InProcess(runtime)


@pytest.fixture
def storage(memory_storage: MemoryStorage) -> Storage | None:
    """The API's logic runs on the memory store (held to Azurite's behaviour by tests/store/contract); a module
    that tests what storage does (an outage, lost answers) asks for Azurite with a `storage` fixture of its own."""
    return memory_storage
