"""`PooledTransport`: azure-core's requests transport, sending through urllib3's pool without requests' session.

Why by hand: py-spy on the host at 100 executions/s put 8 % of its CPU in requests' session between azure-core and
urllib3 (merging settings, preparing the request again, re-quoting a URL azure-core already quoted, the cookie jar,
hooks), work that adds nothing here: azure-core has built the request, storage sets no cookies and nothing is
redirected. `send` sends what `requests.Session.request` would send for the requests the storage SDKs make (the
session's default headers under the request's, the same Content-Length, the pool and TLS context requests' adapter
chooses for the URL, the same timeouts and no retries) and answers the `requests.Response` requests' adapter would
build, so azure-core's response types read it as before. Errors are raised as RequestsTransport raises them.
tests/store/test_transport.py holds the bytes on the wire, the answers and the errors equal to azure-core's
RequestsTransport over a loopback peer. A request this does not send (a proxy, files, a streamed or form body, a
transport that reads the environment's proxies: `use_env_settings`) goes through requests as before.

Connections: `connections` kept per endpoint, as many as the threads that call it side by side (the executor's
64, the recorder's, the renewals'). requests keeps 10, and a herd then opens and discards a connection per call
beyond them ("Connection pool is full"), each a TCP handshake and the CPU to make it.
"""

from __future__ import annotations

from typing import Any

import requests
from azure.core.exceptions import (
    AzureError,
    HttpResponseError,
    IncompleteReadError,
    ServiceRequestError,
    ServiceRequestTimeoutError,
    ServiceResponseError,
    ServiceResponseTimeoutError,
)
from azure.core.pipeline._tools import handle_non_stream_rest_response, is_rest
from azure.core.pipeline.transport import RequestsTransport
from azure.core.pipeline.transport._requests_basic import RequestsTransportResponse
from azure.core.rest._requests_basic import RestRequestsTransportResponse
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers
from urllib3.exceptions import (
    ClosedPoolError,
    ConnectTimeoutError,
    HTTPError,
    InvalidHeader,
    LocationValueError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    ResponseError,
)
from urllib3.util import Timeout

POOL_SIZE = 128
_SENT_HERE = ("stream", "connection_timeout", "read_timeout", "connection_verify", "connection_cert")


class PooledTransport(RequestsTransport):
    def __init__(self, connections: int = POOL_SIZE, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._connections = connections

    def _init_session(self, session: requests.Session) -> None:
        # The transport takes no pool size; this is where it mounts its adapters on the session it makes, once.
        super()._init_session(session)
        for adapter in session.adapters.values():
            if isinstance(adapter, HTTPAdapter):
                adapter.init_poolmanager(self._connections, self._connections)

    def send(self, request: Any, **kwargs: Any) -> Any:
        """The answer, or ServiceResponseError (retried as a lost answer) when the connection closed inside its
        headers: http.client takes the close for their end, so such an answer reads as a whole one with no
        length and an empty body, which the SDKs' deserializers fail on with AttributeError or TypeError."""
        body = request.data
        self.open()
        assert self.session is not None
        if (
            self.session.trust_env  # requests reads proxies and credentials from the environment: let it
            or kwargs.get("proxies")
            or request.files
            or set(kwargs) - set(_SENT_HERE)
            or not _plain(body)
        ):
            response = super().send(request, **kwargs)
        else:
            response = self._wrapped(request, self._direct(request, body, kwargs), kwargs)
        if _cut_in_its_headers(request.method, response.status_code, response.headers):
            response.internal_response.close()  # requests' own response, under either kind azure-core wraps
            raise ServiceResponseError(message="storage's answer ended inside its headers")
        return response

    def _direct(self, request: Any, body: bytes | str | None, kwargs: dict[str, Any]) -> requests.Response:
        assert self.session is not None
        url, method = request.url, request.method.upper()
        headers: CaseInsensitiveDict[str] = CaseInsensitiveDict(self.session.headers)
        headers.update(request.headers)
        for name in [name for name, value in headers.items() if value is None]:
            del headers[name]  # as requests merges them: a header set to None is not sent
        # As requests prepares a body: an empty one is none; urllib3 2 sends text as UTF-8.
        payload = (body.encode("utf-8") if isinstance(body, str) else body) or None
        if payload is not None:
            headers["Content-Length"] = str(len(payload))
        elif method not in ("GET", "HEAD") and headers.get("Content-Length") is None:
            headers["Content-Length"] = "0"
        config = self.connection_config
        prepared = requests.PreparedRequest()
        prepared.url, prepared.method = url, method  # what the adapter reads to choose the pool
        adapter = self.session.get_adapter(url)
        assert isinstance(adapter, HTTPAdapter)
        verify = kwargs.get("connection_verify", config.verify)
        cert = kwargs.get("connection_cert", config.cert)
        try:
            pool = adapter.get_connection_with_tls_context(prepared, verify, cert=cert)
            adapter.cert_verify(pool, url, verify, cert)
            answer = pool.urlopen(
                method=method,
                url=prepared.path_url,
                body=payload,
                headers=headers,
                redirect=False,
                assert_same_host=False,
                preload_content=False,
                decode_content=False,
                retries=adapter.max_retries,
                timeout=Timeout(
                    connect=kwargs.get("connection_timeout", config.timeout),
                    read=kwargs.get("read_timeout", config.read_timeout),
                ),
                chunked=payload is not None and "Content-Length" not in headers,
            )
        except (HTTPError, OSError) as error:
            raise _azure_error(error) from error
        answer.enforce_content_length = True  # type: ignore[attr-defined]  # urllib3 2 HTTPResponse has it
        response = requests.Response()
        response.status_code = answer.status
        response.headers = CaseInsensitiveDict(answer.headers)
        response.encoding = get_encoding_from_headers(response.headers)
        response.raw = answer
        response.reason = answer.reason  # type: ignore[assignment]  # as requests sets it
        response.url = url
        response.request = prepared
        response.connection = adapter
        if not kwargs.get("stream"):
            # As requests' session reads a whole answer, in one join of large chunks: azure-core's response then
            # takes it as read; left unread, azure-core reads it in 4 KiB blocks through its download generator.
            try:
                response.content  # noqa: B018
            except requests.RequestException as error:
                raise _read_error(error) from error
        return response

    def _wrapped(self, request: Any, response: requests.Response, kwargs: dict[str, Any]) -> Any:
        # As RequestsTransport.send wraps requests' answer, for each kind of request azure-core has.
        block = self.connection_config.data_block_size
        if not is_rest(request):
            return RequestsTransportResponse(request, response, block)
        wrapped = RestRequestsTransportResponse(request=request, internal_response=response, block_size=block)
        if not kwargs.get("stream"):
            handle_non_stream_rest_response(wrapped)
        return wrapped


def _read_error(error: requests.RequestException) -> AzureError:
    """What RequestsTransport.send raises when requests' session fails to read a whole answer (a body cut short, a
    read that timed out): the same types, so the retry policy and the store's fault mapping see what they saw."""
    if isinstance(error, requests.exceptions.ReadTimeout):
        return ServiceResponseTimeoutError(error, error=error)
    if isinstance(error, requests.exceptions.ConnectionError):
        if error.args and isinstance(error.args[0], ProtocolError):
            return ServiceResponseError(error, error=error)
        return ServiceRequestError(error, error=error)
    if isinstance(error, requests.exceptions.ChunkedEncodingError):
        if "IncompleteRead" in str(error):
            return IncompleteReadError(error, error=error)
        return HttpResponseError(error, error=error)
    return ServiceResponseError(error, error=error)


def _plain(body: Any) -> bool:
    return body is None or isinstance(body, (bytes, str))


def _azure_error(error: BaseException) -> BaseException:
    """The azure-core error RequestsTransport raises for what urllib3 raised under requests (no retries)."""
    if isinstance(error, NewConnectionError):
        return ServiceRequestError(error, error=error)
    if isinstance(error, ConnectTimeoutError):
        return ServiceRequestTimeoutError(error, error=error)
    if isinstance(error, ReadTimeoutError):
        return ServiceResponseTimeoutError(error, error=error)
    if isinstance(error, ProtocolError | InvalidHeader | LocationValueError):
        return ServiceResponseError(error, error=error)
    if isinstance(error, MaxRetryError):
        if isinstance(error.reason, ConnectTimeoutError) and not isinstance(error.reason, NewConnectionError):
            return ServiceRequestTimeoutError(error, error=error)
        if isinstance(error.reason, ResponseError):
            return ServiceResponseError(error, error=error)
        return ServiceRequestError(error, error=error)
    if isinstance(error, ClosedPoolError | OSError) or type(error).__name__ in ("SSLError", "ProxyError"):
        return ServiceRequestError(error, error=error)
    return error


def _cut_in_its_headers(method: str, status: int, headers: Any) -> bool:
    # Storage frames every answer that has a body by its length or in chunks (never by closing the connection);
    # a header cut part-way keeps what came of its value ("Transfer-Encoding: chu").
    if method.upper() == "HEAD" or status < 200 or status in (204, 304):
        return False
    length = str(headers.get("Content-Length") or "")
    return not length.isdigit() and not str(headers.get("Transfer-Encoding") or "").lower().endswith("chunked")
