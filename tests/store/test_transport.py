"""PooledTransport (shared/store/transport.py) sends and answers as azure-core's RequestsTransport does: against a
loopback peer that records every byte it receives, the same requests on the wire (each kind of azure-core request,
every method, text, bytes and empty bodies), the same answers read (whole or streamed, framed by length or in
chunks) and the same errors (nothing listening, a connection dropped before its answer, an answer that never
comes); an answer cut inside its headers is refused on both of its paths."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from azure.core.exceptions import AzureError, ServiceResponseError
from azure.core.pipeline import Pipeline
from azure.core.pipeline.transport import HttpRequest as LegacyRequest
from azure.core.pipeline.transport import RequestsTransport
from azure.core.rest import HttpRequest

from shared.store.transport import PooledTransport

ANSWERS = {
    "length": b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nx-ms-a: 1\r\n"
    b'Content-Length: 17\r\n\r\n{"value": "\xc3\xbc\xc3\xbc"}',
    "chunked": b"HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    "empty": b"HTTP/1.1 204 No Content\r\nx-ms-b: two words\r\n\r\n",
    "cut": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chu",
    # Answers whose body is cut short (then the connection closes) or stalls (the connection stays, silent).
    "chunks cut": b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
    "length cut": b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nten bytes.",
    "stall": b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nten bytes.",
}


class Peer:
    """A loopback server that keeps the raw bytes of every request and answers `mode` to each: one of ANSWERS,
    "drop" (close without answering) or "silent" (answer nothing, keep the connection)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.mode = "length"
        self.received: list[bytes] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            buffer = b""
            while True:
                request, buffer = _one_request(connection, buffer)
                if request is None:
                    return
                self.received.append(request)
                if self.mode == "drop":
                    return
                if self.mode == "silent":
                    connection.recv(1)  # until the client gives up
                    return
                connection.sendall(ANSWERS[self.mode])
                if self.mode == "stall":
                    connection.recv(1)  # until the client gives up
                if self.mode in ("cut", "chunks cut", "length cut", "stall"):
                    return


def _one_request(connection: socket.socket, buffer: bytes) -> tuple[bytes | None, bytes]:
    while b"\r\n\r\n" not in buffer:
        more = connection.recv(65536)
        if not more:
            return None, b""
        buffer += more
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    length = next((int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length:")), 0)
    chunked = any(line.startswith(b"transfer-encoding:") and b"chunked" in line for line in lines)
    end = b"0\r\n\r\n" if chunked else None
    while (end is not None and not rest.endswith(end)) or (end is None and len(rest) < length):
        rest += connection.recv(65536)
    size = len(rest) if chunked else length
    return head + b"\r\n\r\n" + rest[:size], rest[size:]


@pytest.fixture(scope="module")
def peer() -> Iterator[Peer]:
    running = Peer()
    yield running
    running.listener.close()


@contextmanager
def transports() -> Iterator[tuple[RequestsTransport, PooledTransport]]:
    """azure-core's transport and ours, configured as the store configures its clients (shared/store/clients.py)."""
    theirs = RequestsTransport(use_env_settings=False, connection_timeout=2, read_timeout=1)
    ours = PooledTransport(use_env_settings=False, connection_timeout=2, read_timeout=1)
    with theirs, ours:
        yield theirs, ours


BODIES: list[bytes | str | None] = [
    None,
    None,
    None,
    b"--b\r\nbinary \x00\xff\r\n--b--",
    '{"text": "\u00fc, \u65e5\u672c"}',
    b"",
    "<QueueMessage><MessageText>\u00fc</MessageText></QueueMessage>",
]


def requests_to(port: int) -> list[Any]:
    """Each method with the headers and bodies the storage SDKs send, as either kind of azure-core request."""
    base = f"http://127.0.0.1:{port}"
    shapes = [
        ("GET", "/t()?%24filter=PartitionKey%20eq%20%27a%27&%24top=5&NextRowKey=r%2F1", {"x-ms-version": "2019-02-02"}),
        ("HEAD", "/t", {"User-Agent": "azsdk-python-data-tables/12.7.0"}),
        ("DELETE", "/t(PartitionKey='a',RowKey='b')", {"If-Match": "*"}),
        ("POST", "/$batch", {"Content-Type": "multipart/mixed; boundary=b"}),
        ("PUT", "/t(PartitionKey='a',RowKey='c')", {"Content-Type": "application/json", "Content-Length": "3"}),
        ("POST", "/q/messages", {"Accept-Encoding": "identity"}),
        ("PUT", "/q/messages", {"Accept": "application/xml", "Connection": "close"}),
    ]
    made: list[Any] = []
    for (method, path, headers), body in zip(shapes, BODIES, strict=True):
        made.append(HttpRequest(method, base + path, headers=headers, content=body))
        legacy = LegacyRequest(method, base + path, headers=headers)
        if isinstance(body, bytes):
            legacy.set_bytes_body(body)
        elif isinstance(body, str):
            legacy.set_text_body(body)
        made.append(legacy)
    return made


def exchange(transport: RequestsTransport, request: Any, stream: bool) -> tuple[Any, ...]:
    response = Pipeline(transport).run(request, stream=stream).http_response
    read_by_the_transport = response.internal_response._content_consumed
    # A whole answer is read by the transport (a rest answer's content raises otherwise); a streamed one here.
    legacy = not hasattr(response, "iter_bytes")
    body = response.body() if legacy else (response.read() if stream else response.content)
    return response.status_code, dict(response.headers), response.reason, body, type(response), read_by_the_transport


@pytest.mark.parametrize("mode", ["length", "chunked", "empty"])
@pytest.mark.parametrize("stream", [False, True])
def test_the_same_bytes_on_the_wire_and_the_same_answers(peer: Peer, mode: str, stream: bool) -> None:
    peer.mode = mode
    with transports() as (theirs, ours):
        for mine, reference in zip(requests_to(peer.port), requests_to(peer.port), strict=True):
            if stream and mine.method == "HEAD":
                continue
            peer.received.clear()
            expected = exchange(theirs, reference, stream)
            got = exchange(ours, mine, stream)
            assert len(peer.received) == 2, peer.received
            assert peer.received[1] == peer.received[0]
            assert got == expected
            assert expected[0] == {"length": 200, "chunked": 201, "empty": 204}[mode]


def error_of(transport: RequestsTransport, request: Any) -> type[BaseException]:
    with pytest.raises(AzureError) as raised:
        Pipeline(transport).run(request)
    return type(raised.value)


@pytest.mark.parametrize("mode", ["drop", "silent", "chunks cut", "length cut", "stall"])
def test_the_same_errors_when_the_answer_does_not_come_or_its_body_is_cut_short(peer: Peer, mode: str) -> None:
    """A body is read whole inside the transport here, as requests' session reads it there."""
    peer.mode = mode
    with transports() as (theirs, ours):
        for kind in (HttpRequest, LegacyRequest):
            url = f"http://127.0.0.1:{peer.port}/t"
            expected = error_of(theirs, kind("GET", url))
            assert error_of(ours, kind("GET", url)) is expected
            assert issubclass(expected, ServiceResponseError) or mode not in ("drop", "silent")


def test_the_same_error_when_nothing_listens() -> None:
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    with transports() as (theirs, ours):
        expected = error_of(theirs, HttpRequest("GET", f"http://127.0.0.1:{port}/t"))
        assert error_of(ours, HttpRequest("GET", f"http://127.0.0.1:{port}/t")) is expected
        assert not issubclass(expected, ServiceResponseError)


@pytest.mark.parametrize("environment", [False, True])
def test_an_answer_cut_inside_its_headers_is_refused(peer: Peer, environment: bool) -> None:
    """On the direct path and on requests' (a transport reading the environment's proxies goes through requests)."""
    peer.mode = "cut"
    ours = PooledTransport(use_env_settings=environment, connection_timeout=2, read_timeout=1)
    request: Any = HttpRequest("GET", f"http://127.0.0.1:{peer.port}/t")
    with ours, pytest.raises(ServiceResponseError, match="inside its headers"):
        Pipeline(ours).run(request)
