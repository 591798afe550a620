"""Real local HTTP(S) peers: a recording HTTPS server (optionally demanding a client certificate),
a slow server, and an Azure AD v1 token endpoint."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs


@dataclass
class Hit:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    client_subject: str | None = None  # CN of the client certificate, when one was presented
    at: datetime = field(default_factory=lambda: datetime.now(UTC))  # when the request arrived


@dataclass
class Server:
    url: str
    hits: list[Hit] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    connections: int = 0  # connections accepted, whether a request came on them or not

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


Respond = Callable[[Hit], tuple[int, dict[str, str], bytes]]


def serve(respond: Respond, tls: ssl.SSLContext | None = None, delay: float = 0.0) -> Server:
    """Start a threaded server on a free loopback port; `respond` turns each recorded hit into a reply."""
    record = Server(url="")

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            subject = None
            if isinstance(self.connection, ssl.SSLSocket):
                peer = self.connection.getpeercert()
                if peer:
                    subject = dict(item[0] for item in peer["subject"]).get("commonName")
            hit = Hit(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, subject)
            record.hits.append(hit)
            if delay:
                time.sleep(delay)
            status, headers, payload = respond(hit)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = _Backlogged(("127.0.0.1", 0), Handler)
    server.record = record
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    scheme = "https" if tls is not None else "http"
    record.url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    record.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return record


class _Backlogged(ThreadingHTTPServer):
    # socketserver's listen backlog is 5: a herd's connections beyond it wait for the kernel's SYN retry, a second
    # later, which reads as the scheduler sending late.
    request_queue_size = 256
    record: Server

    def process_request(self, request: Any, client_address: Any) -> None:
        self.record.connections += 1
        super().process_request(request, client_address)


def server_tls(cert: Path, key: Path, client_ca: Path | None = None) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    if client_ca is not None:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(client_ca)
    return context


def ok(hit: Hit) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Content-Type": "text/plain"}, b"secure hello"


@dataclass
class TokenEndpoint:
    """What an Azure AD v1 token endpoint does for client credentials, for one known client."""

    client_id: str
    secret: str
    expires_in: int = 3600
    issued: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, hit: Hit) -> tuple[int, dict[str, str], bytes]:
        form = {k: v[0] for k, v in parse_qs(hit.body.decode()).items()}
        json_type = {"Content-Type": "application/json"}
        if not hit.path.endswith("/oauth2/token") or form.get("grant_type") != "client_credentials":
            return 400, json_type, json.dumps({"error": "invalid_request"}).encode()
        if form.get("client_id") != self.client_id or form.get("client_secret") != self.secret:
            return (
                401,
                json_type,
                json.dumps(
                    {"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret."}
                ).encode(),
            )
        tenant = hit.path.split("/")[1]
        token = f"token-{len(self.issued) + 1}-{tenant}-{form['resource']}"
        self.issued.append({"tenant": tenant, "resource": form["resource"], "token": token})
        return (
            200,
            json_type,
            json.dumps(
                {
                    "token_type": "Bearer",
                    "expires_in": str(self.expires_in),
                    "resource": form["resource"],
                    "access_token": token,
                }
            ).encode(),
        )
