"""A pass-through TCP proxy in front of Azurite that counts storage requests (transactions), for the benchmarks.

Hand-written because the count has to include everything the app does (the host's queue polling too), and
Azurite reports none. A request is counted when a chunk from the client starts with an HTTP method: the
storage SDKs write each request's head in one send, so this counts requests, not packets. An entity-group
transaction (one `POST $batch`) counts once, as Azure bills it. Each request is also counted by kind
(`kinds`): its method and the table or queue it names (e.g. `GET schedulerJobs`, `POST $batch`,
`DELETE scheduler-occurrences`), read from its request line.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections import Counter
from urllib.parse import urlsplit, urlunsplit

_METHODS = (b"GET ", b"POST ", b"PUT ", b"DELETE ", b"PATCH ", b"MERGE ", b"HEAD ", b"OPTIONS ")


class CountingProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.requests = 0
        self.kinds: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                return
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, requests: bool) -> None:
        try:
            while data := source.recv(65536):
                if requests and data.startswith(_METHODS):
                    kind = _kind(data)
                    with self._lock:
                        self.requests += 1
                        self.kinds[kind] += 1
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    def close(self) -> None:
        self._listener.close()


def _kind(data: bytes) -> str:
    """`METHOD resource` of a request line `METHOD /account/resource(...)/...?query HTTP/1.1`."""
    line = data[: data.find(b"\r\n")].decode("latin-1", "replace")
    method, _, target = line.partition(" ")
    parts = target.split("?", 1)[0].split("/")
    resource = parts[2] if len(parts) > 2 else ""
    return f"{method} {resource.split('(', 1)[0] or '/'}"


class StorageMeter:
    """Counting proxies for the blob, queue and table endpoints of a connection string (the blobs: the minute
    timer's schedule status, kept by the local host as the Functions host keeps it)."""

    def __init__(self, connection_string: str) -> None:
        self.proxies: list[CountingProxy] = []
        parts = []
        for item in connection_string.split(";"):
            key, _, value = item.partition("=")
            if key in ("BlobEndpoint", "QueueEndpoint", "TableEndpoint") and value:
                url = urlsplit(value)
                proxy = CountingProxy(url.port or 80)
                self.proxies.append(proxy)
                item = f"{key}={urlunsplit(url._replace(netloc=f'127.0.0.1:{proxy.port}'))}"
            parts.append(item)
        self.connection_string = ";".join(parts)

    @property
    def requests(self) -> int:
        return sum(p.requests for p in self.proxies)

    def kinds(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for proxy in self.proxies:
            with proxy._lock:
                total.update(proxy.kinds)
        return total

    def close(self) -> None:
        for proxy in self.proxies:
            proxy.close()
