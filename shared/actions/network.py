"""Outbound target policy: resolve the name, vet every address, and hand back only vetted addresses.

No connection is made before the check (outbound.py connects only to the addresses returned here), so
no packet ever reaches an address the policy refuses, and a refusal reads the same whatever the state of
the port behind it: the scheduler cannot be used to scan internal ports. One resolution serves the whole
request, so a name that rebinds to an internal address after the check is never connected to.

The policy is the deployment's SCHEDULER_PRIVATE_TARGETS (shared/private_targets.py): which internal
addresses may be called, link-local and metadata addresses only when named one by one. It applies to every
address a name resolves to, and a refusal names the entry that would allow the target.
"""

from __future__ import annotations

import socket
from typing import Any

from ..private_targets import PrivateTargets

AddressInfo = tuple[Any, ...]  # one getaddrinfo() entry: (family, type, proto, canonname, sockaddr)


class TargetRefused(Exception):  # the name reads as the history message says it
    """The target resolves to an address this deployment may not call. The message is the same whatever
    the port's state (nothing was connected to learn it)."""


def resolve(host: str, port: int, policy: PrivateTargets) -> list[AddressInfo]:
    """The TCP addresses to connect to for `host`, each one allowed by `policy`.

    Raises TargetRefused when any address is refused (a name that answers with one public and one
    internal address is refused whole), socket.gaierror when the name does not resolve.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    reason = policy.refusal(host, port, [str(info[4][0]) for info in infos])
    if reason is not None:
        raise TargetRefused(reason)
    return infos
