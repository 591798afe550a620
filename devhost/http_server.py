"""The HTTP front end: werkzeug's threaded WSGI server in front of the app's HTTP-triggered functions.

Contract: each request is routed (see routing.py) and handed to the function as a real
`func.HttpRequest(method, url, headers=, params=, route_params=, body=)`: repeated headers are joined with
", " and repeated query parameters with ",", as the host does. The function returns a `func.HttpResponse`
(status, headers, body; Content-Type from mimetype/charset unless set, like the worker). No route → 404; a
route matching only with another method → 404 too, like the real host (the access line says why). An
exception or another return type → 500 with a generic body; the traceback goes to the log only. Auth
levels are enforced as in Azure (keys.py): a route that needs a key and gets no valid one → 401 with an empty
body, before the function runs. Every request writes one access line to the `devhost.http_server` logger.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

import azure.functions as func
from werkzeug.datastructures import Headers
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from devhost.indexing import FunctionInfo
from devhost.invoker import Invokes
from devhost.keys import FunctionKeys
from devhost.routing import MethodMismatch, Router

log = logging.getLogger(__name__)
ERROR_BODY = "Internal Server Error: the function failed; see the host console."


class _QuietHandler(WSGIRequestHandler):
    # Our own access line (with function and duration) replaces werkzeug's.
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


def _joined(pairs: Iterable[tuple[str, str]], separator: str) -> dict[str, str]:
    joined: dict[str, str] = {}
    for key, value in pairs:
        joined[key] = f"{joined[key]}{separator}{value}" if key in joined else value
    return joined


def to_wsgi_response(result: Any) -> Response:
    """A werkzeug Response for what an HTTP function returned; TypeError for anything but func.HttpResponse."""
    if not isinstance(result, func.HttpResponse):
        raise TypeError(f"an HTTP function must return func.HttpResponse, not {type(result).__name__}")
    headers = Headers(list(result.headers.items()))
    if "content-type" not in headers:
        mimetype = result.mimetype
        headers["Content-Type"] = f"{mimetype}; charset={result.charset}" if mimetype.startswith("text/") else mimetype
    return Response(result.get_body() or b"", status=result.status_code, headers=headers)


class HttpFrontend:
    def __init__(
        self, router: Router[FunctionInfo], invoker: Invokes, host: str, port: int, keys: FunctionKeys | None = None
    ) -> None:
        self._router = router
        self._invoker = invoker
        self._keys = keys  # None: every route is anonymous
        try:
            self._server: BaseWSGIServer = make_server(host, port, self, threaded=True, request_handler=_QuietHandler)
        except SystemExit:
            # werkzeug reports a failed bind on stderr and exits; a library must raise instead.
            raise OSError(f"cannot listen on {host}:{port} (address in use or not available)") from None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_port)

    def start(self) -> None:
        """Serve in a background thread; the socket is already listening when this returns."""
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="devhost-http",
            daemon=True,
        )
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout)
            self._thread = None
        self._server.server_close()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        started = time.monotonic()
        request = Request(environ)
        raw_target = environ.get("RAW_URI") or environ.get("REQUEST_URI") or request.full_path
        response, note = self._respond(request, raw_target)
        log.info(
            '%s "%s %s" %d %s %dms%s',
            request.remote_addr,
            request.method,
            raw_target,
            response.status_code,
            response.content_length if response.content_length is not None else "-",
            (time.monotonic() - started) * 1000,
            f" ({note})" if note else "",
        )
        return response(environ, start_response)

    def _respond(self, request: Request, raw_target: str) -> tuple[Response, str]:
        resolved = self._router.resolve(request.method, raw_target)
        if resolved is None:
            return Response(status=404), "no function route matches"
        if isinstance(resolved, MethodMismatch):
            return Response(status=404), f"route exists for {', '.join(resolved.allowed)} only"
        function = resolved.target
        if self._keys is not None and not self._keys.admits(
            function, request.headers.items(), request.args.items(multi=True)
        ):
            refused = Response(status=401)  # as the host's UnauthorizedResult: no body, no content type
            del refused.headers["Content-Type"]
            return refused, f"{function.name}: no valid Functions key"
        http_request = func.HttpRequest(
            request.method,
            request.url,
            headers=_joined(request.headers.items(), ", "),
            params=_joined(request.args.items(multi=True), ","),
            route_params=resolved.values,
            body=request.get_data(),
        )
        try:
            result = self._invoker.invoke(function, http_request, reason="This function was called over HTTP")
        except BaseException:  # a failing function is a 500, never a dropped connection
            return Response(ERROR_BODY, status=500, content_type="text/plain; charset=utf-8"), function.name
        try:
            return to_wsgi_response(result), function.name
        except TypeError as error:
            log.error("function %s: %s", function.name, error)
            return Response(ERROR_BODY, status=500, content_type="text/plain; charset=utf-8"), function.name
