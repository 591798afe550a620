"""A fault-injecting TCP proxy for the storage tests: the app talks to Azurite through it.

Hand-written because no test library injects these faults at the TCP level on loopback: the point is
what a real storage client sees when the network misbehaves, including the nastiest case, a request
that reached storage and was applied but whose answer never came back.

Modes (`proxy.mode`, changeable at any time; new data follows the new mode):
- "pass": forward both ways.
- "latency": forward, delaying every chunk of the answer by `proxy.latency` seconds.
- "drop": forward the request, let storage apply it, then reset the connection instead of answering
  (the client sees a reset after its request was delivered).
- "reset": reset every connection as soon as it is accepted (nothing reaches storage).
- "cut": forward each connection's answers up to `proxy.cut_after` bytes, then reset it: an answer longer than
  that arrives cut part-way (its headers and the start of its body), after storage applied the request.
- "down": refuse connections (the listening socket is closed), like storage being gone.

`drop_ratio` (0..1) makes "drop" apply to that share of answers, and "reset" to that share of new
connections, chosen at random (seeded).

`drop_answers_to(pattern, count)` singles out requests, whatever the mode: the next `count` requests whose bytes
match the regular expression `pattern` (e.g. one table's entity-group transaction) have their answers dropped
as "drop" does (storage applied them), or, with `lands=False`, are reset before the part holding the match
reaches storage (nothing of them is applied: the connection closed as they were sent).
"""

from __future__ import annotations

import contextlib
import random
import re
import socket
import struct
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit


def _reset(sock: socket.socket) -> None:
    """Close with RST (SO_LINGER 0), as a dropped connection looks to the peer."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)  # wakes the other pump's recv(); close alone would not
    with contextlib.suppress(OSError):
        sock.close()


class _Link:
    """One client connection's state shared by its two pumps: whether the answer to its request is to be dropped."""

    def __init__(self) -> None:
        self.doomed = False
        self.lands = True
        self.seen = b""  # the current request's last bytes, for a match across two reads


class FaultProxy:
    def __init__(self, upstream_port: int, seed: int = 7) -> None:
        self.upstream_port = upstream_port
        self.mode = "pass"
        self.latency = 0.0
        self.drop_ratio = 1.0
        self.cut_after = 4096
        self.dropped = 0
        self.resets = 0  # connections reset at accept ("reset" mode)
        self._singled: re.Pattern[bytes] | None = None
        self._singled_left = 0
        self._singled_lands = True
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._closing = False
        self._listener: socket.socket | None = None
        self.port = 0
        self._listen()

    def _listen(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(256)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def set_mode(self, mode: str) -> None:
        """Switch mode; "down" closes the listener and every open connection, leaving "down" listens again."""
        assert mode in ("pass", "latency", "drop", "reset", "down", "cut"), mode
        with self._lock:
            was_down = self.mode == "down"
            self.mode = mode
            listener, connections = self._listener, list(self._connections)
        if mode == "reset" and self.drop_ratio >= 1:
            for sock in connections:
                _reset(sock)
        if mode == "down" and not was_down:
            self._listener = None
            if listener is not None:
                with contextlib.suppress(OSError):
                    listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() blocked on it
                listener.close()
            for sock in connections:
                _reset(sock)
        elif was_down and mode != "down":
            self._listen()

    def drop_answers_to(self, pattern: bytes, count: int = 1, lands: bool = True) -> None:
        """Drop the answers to the next `count` requests matching `pattern` (see the module's docstring)."""
        with self._lock:
            self._singled, self._singled_left, self._singled_lands = re.compile(pattern), count, lands

    def _singles_out(self, link: _Link, data: bytes) -> bool:
        """Whether this part of a request matches the pattern of `drop_answers_to` (counted once per request)."""
        if self._singled is None or link.doomed:
            return False
        seen, link.seen = link.seen + data, (link.seen + data)[-4096:]
        with self._lock:
            if self._singled_left <= 0 or not self._singled.search(seen):
                return False
            self._singled_left -= 1
            link.doomed, link.lands = True, self._singled_lands
            return True

    def close(self) -> None:
        self._closing = True
        self.set_mode("down")

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            if self.mode == "down" or (self.mode == "reset" and self._random.random() < self.drop_ratio):
                self.resets += self.mode == "reset"
                _reset(client)
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
            except OSError:
                _reset(client)
                continue
            upstream.settimeout(None)
            with self._lock:
                self._connections |= {client, upstream}
            link = _Link()
            threading.Thread(target=self._pump, args=(client, upstream, False, link), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True, link), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, answers: bool, link: _Link) -> None:
        forwarded = 0
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if not answers and self._singles_out(link, data) and not link.lands:
                    self.dropped += 1
                    break  # the connection closes as the request is sent: storage never has it whole
                if answers and link.doomed:
                    self.dropped += 1
                    break  # storage applied the singled-out request; its answer is thrown away
                if answers:
                    link.seen = b""  # what the client sends next is another request
                if answers and self.mode == "cut" and forwarded + len(data) > self.cut_after:
                    sink.sendall(data[: max(self.cut_after - forwarded, 0)])
                    self.dropped += 1
                    break  # the rest of the answer is thrown away
                forwarded += len(data)
                if answers and self.mode == "latency":
                    time.sleep(self.latency)
                if answers and self.mode == "drop" and self._random.random() < self.drop_ratio:
                    self.dropped += 1
                    break  # storage applied the request; its answer is thrown away
                if self.mode == "down":
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._connections -= {source, sink}
            _reset(source)
            _reset(sink)


class StorageFaults:
    """One proxy per storage service (queue, table), and the connection string that goes through them."""

    def __init__(self, connection_string: str, seed: int = 7) -> None:
        self._original = connection_string
        self.proxies: dict[str, FaultProxy] = {}
        parts = []
        for item in connection_string.split(";"):
            key, _, value = item.partition("=")
            if key in ("QueueEndpoint", "TableEndpoint") and value:
                url = urlsplit(value)
                proxy = self.proxies[key] = FaultProxy(url.port or 80, seed)
                value = urlunsplit(url._replace(netloc=f"127.0.0.1:{proxy.port}"))
                item = f"{key}={value}"
            parts.append(item)
        self.connection_string = ";".join(parts)

    def __iter__(self) -> Iterator[FaultProxy]:
        return iter(self.proxies.values())

    def set_mode(self, mode: str, latency: float = 0.0, drop_ratio: float = 1.0, cut_after: int = 4096) -> None:
        for proxy in self:
            proxy.latency, proxy.drop_ratio, proxy.cut_after = latency, drop_ratio, cut_after
            proxy.set_mode(mode)

    @property
    def dropped(self) -> int:
        return sum(proxy.dropped for proxy in self)

    @property
    def resets(self) -> int:
        return sum(proxy.resets for proxy in self)

    def close(self) -> None:
        for proxy in self:
            proxy.close()
