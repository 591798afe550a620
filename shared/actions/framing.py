"""Headers that frame an HTTP message or steer its connection: the scheduler's HTTP client alone sets them.

A job that could set `Transfer-Encoding: chunked` beside the client's `Content-Length` could smuggle a
second request into the connection (RFC 9112 §6.1, §11.2); `Connection`, `Upgrade`, `TE`, `Trailer`,
`Keep-Alive` and `Proxy-*` are hop-by-hop (RFC 9110 §7.6.1) and `Host` names the target, which the
client derives from the URI. The API refuses them at write time; the Http action drops any it finds in
a definition stored before that rule.
"""

from __future__ import annotations

FRAMING_HEADERS = frozenset(
    {"transfer-encoding", "content-length", "connection", "host", "upgrade", "te", "trailer", "keep-alive"}
)


def is_framing_header(name: str) -> bool:
    lowered = name.lower()
    return lowered in FRAMING_HEADERS or lowered.startswith("proxy-")
