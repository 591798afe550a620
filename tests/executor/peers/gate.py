"""A loopback HTTP peer that holds requests: it counts how many it holds at once and answers them only when
released, in rounds of `round_size` (each round answered once that many are held) or all at once by
`release()`. It shows how many actions a client really keeps in flight, with no timing in the assertion."""

from __future__ import annotations

import contextlib
import socket
import threading

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"


class Gate:
    def __init__(self, round_size: int | None = None, hold_at_most: float = 30.0) -> None:
        self.round_size = round_size
        self.hold_at_most = hold_at_most
        self.held = 0
        self.most_at_once = 0
        self.answered = 0
        self.threads_at_full_round = 0  # threads of this process when the first round was complete
        self._released = False
        self._round = 0
        self._changed = threading.Condition()
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=1024)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/held"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                data += chunk
            with self._changed:
                self.held += 1
                self.most_at_once = max(self.most_at_once, self.held)
                my_round = self._round
                if self.round_size is not None and self.held >= self.round_size:
                    if not self._round:
                        self.threads_at_full_round = threading.active_count()
                    self._round += 1  # this round is complete: answer everything held
                self._changed.notify_all()
                self._changed.wait_for(lambda: self._released or self._round > my_round, self.hold_at_most)
                self.held -= 1
                self.answered += 1
            with contextlib.suppress(OSError):
                connection.sendall(ANSWER)

    def wait_held(self, count: int, timeout: float = 30.0) -> bool:
        """Wait until `count` requests are held at once."""
        with self._changed:
            return self._changed.wait_for(lambda: self.held >= count, timeout)

    def release(self) -> None:
        with self._changed:
            self._released = True
            self._changed.notify_all()

    def close(self) -> None:
        self.release()
        self.sock.close()
