"""Raw TCP peers on loopback for the outbound tests: a listener that only counts accepted connections, a
server that records every connection's bytes as HTTP/1.1 framing reads them, a trickling server, and a server
answering fixed bytes."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field


class AcceptCounter:
    """Listens on a loopback address and counts every connection it accepts (and closes it at once)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind((host, 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = False
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self._stop:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self._stop = True
        self.sock.close()


@dataclass
class Exchange:
    """One connection as the server saw it: the request it framed, and every byte after that request."""

    head: bytes = b""
    body: bytes = b""
    leftover: bytes = b""

    @property
    def headers(self) -> dict[str, str]:
        lines = self.head.decode("latin-1").split("\r\n")[1:]
        return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}

    @property
    def request_line(self) -> str:
        return self.head.decode("latin-1").split("\r\n", 1)[0]


@dataclass
class FramingServer:
    """Reads each connection as a keep-alive HTTP/1.1 server would: one request framed by Content-Length
    (or chunked), answered with a body naming its request line; then it keeps reading, so bytes a client
    smuggled after the first request show up in `leftover` instead of vanishing."""

    exchanges: list[Exchange] = field(default_factory=list)
    port: int = 0

    def start(self) -> FramingServer:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def _run(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        exchange = Exchange()
        self.exchanges.append(exchange)
        connection.settimeout(5)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                data += chunk
            exchange.head, _, data = data.partition(b"\r\n\r\n")
            length = int(exchange.headers.get("content-length", "0"))
            while len(data) < length:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                data += chunk
            exchange.body, data = data[:length], data[length:]
            reply = f"answer to {exchange.request_line}".encode()
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(reply)).encode() + b"\r\n\r\n" + reply)
            exchange.leftover = data
            while True:  # keep-alive: whatever else arrives on this connection is another request
                chunk = connection.recv(65536)
                if not chunk:
                    break
                exchange.leftover += chunk
        except OSError:
            pass
        finally:
            connection.close()

    def close(self) -> None:
        self.sock.close()


class Trickler:
    """Accepts, reads the request, then sends `prefix` at once and one byte of `drip` every `interval` s."""

    def __init__(self, prefix: bytes, drip: bytes, interval: float) -> None:
        self.prefix, self.drip, self.interval = prefix, drip, interval
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.closed_at: float | None = None  # when the client went away (monotonic)
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        try:
            connection, _ = self.sock.accept()
        except OSError:
            return
        with connection:
            connection.settimeout(30)
            try:
                connection.recv(65536)
                connection.sendall(self.prefix)
                for byte in self.drip:
                    time.sleep(self.interval)
                    connection.sendall(bytes([byte]))
            except OSError:
                self.closed_at = time.monotonic()

    def close(self) -> None:
        self.sock.close()


class RawReply:
    """Answers every connection with `reply`, bytes as they are (what http.server would not write); counts them."""

    def __init__(self, reply: bytes) -> None:
        self.reply, self.requests = reply, 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            with connection:
                data = b""
                while b"\r\n\r\n" not in data and (chunk := connection.recv(65536)):
                    data += chunk
                self.requests += 1
                connection.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()
