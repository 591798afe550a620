"""`python -m devhost.echo`: a local HTTP target for trying jobs on a machine without a network.

Contract: listens on 127.0.0.1 (`--port`, default 8080) and answers every request, whatever its method and
path, with `200 OK` and a short text of what it received: the request line, the body, and the `x-ms-*`
headers the scheduler sends (job id, execution tag, attempt). `?status=NNN` answers with that status instead
(e.g. `?status=500` to see a failure and its retries). Prints its address on stdout when ready and one line
per request on stderr; Ctrl-C, SIGTERM or SIGHUP stop it. It is a development aid, never part of the app.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from devhost.stop_request import StopRequest

MAX_ECHOED = 2000  # characters of the body echoed back


class EchoHandler(BaseHTTPRequestHandler):
    server_version = "devhost-echo"

    def version_string(self) -> str:
        return self.server_version  # short: the scheduler's history message quotes the response headers

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        wanted = (parse_qs(urlsplit(self.path).query).get("status") or ["200"])[0]
        status = int(wanted) if wanted.isdigit() and 200 <= int(wanted) <= 599 else 200
        scheduler = [f"{k}: {v}" for k, v in self.headers.items() if k.lower().startswith("x-ms-")]
        lines = [f"echo: {self.command} {self.path}", *([f"body: {body[:MAX_ECHOED]}"] if body else []), *scheduler]
        text = "\n".join(lines) + "\n"
        payload = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        job = self.headers.get("x-ms-scheduler-jobid", "").rsplit("/", 1)[-1]
        sys.stderr.write(
            f"echo: {self.command} {self.path} -> {status} {HTTPStatus(status).phrase}"
            f"{f' (job {job})' if job else ''}\n"
        )

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per request is written by _answer


def serve(port: int, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """A started echo server (in a daemon thread); `server_address` holds the port when 0 was asked."""
    server = ThreadingHTTPServer((host, port), EchoHandler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, name="echo", daemon=True).start()
    return server


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devhost.echo", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default 8080)")
    args = parser.parse_args(argv)
    try:
        server = serve(args.port)
    except OSError:
        sys.stderr.write(
            f"error: 127.0.0.1:{args.port} is already in use; choose another port: "
            f"python -m devhost.echo --port {args.port + 1}\n"
        )
        return 1
    stop = StopRequest()  # its handler takes no lock the interrupted main thread may hold
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop.handle)
    print(f"http://127.0.0.1:{server.server_address[1]}/", flush=True)
    stop.wait()
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
