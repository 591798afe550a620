"""devhost.azurite.free_ports: the ports a test or bench hands a server it starts (Azurite, a local host) are drawn
below the system's ephemeral range, where no outgoing connection's local port can take one before the server binds
it (a full run's host once found its port taken that way); they are distinct and a server can bind each."""

from __future__ import annotations

import socket
from pathlib import Path

from devhost.azurite import free_ports
from devhost.devstorage import bindable


def _first_ephemeral() -> int:
    return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])


def test_free_ports_are_distinct_bindable_and_below_the_ephemeral_range() -> None:
    ports = free_ports(40)
    assert len(ports) == 40 and len(set(ports)) == 40, ports
    assert all(1024 < port < _first_ephemeral() for port in ports), ports
    assert all(bindable(port) for port in ports), ports


def test_an_outgoing_connection_takes_no_port_free_ports_could_give() -> None:
    """The system's own pick for an outgoing connection (or a bind to 0) lands in the ephemeral range."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with socket.create_connection(listener.getsockname()) as outgoing:
            local = outgoing.getsockname()[1]
    assert local >= _first_ephemeral() and local not in free_ports(40)
