"""The local Azurite as the app's storage clients meet it: an idle connection stays open as real storage keeps
it (Azurite's own default closes it after 5 s, and a request sent as it closes is lost)."""

from __future__ import annotations

import http.client
import time

from devhost.azurite import Azurite


def test_an_idle_connection_is_kept_longer_than_azurite_keeps_it_by_default(azurite: Azurite) -> None:
    connections = [
        http.client.HTTPConnection("127.0.0.1", port, timeout=10) for port in (azurite.ports.table, azurite.ports.queue)
    ]
    try:
        for connection in connections:
            connection.request("GET", "/devstoreaccount1?comp=list")
            connection.getresponse().read()  # refused without a signature; what matters is the connection
        time.sleep(6)
        for connection in connections:
            connection.request("GET", "/devstoreaccount1?comp=list")  # the same connection, 6 s idle
            assert connection.getresponse().status > 0
    finally:
        for connection in connections:
            connection.close()
