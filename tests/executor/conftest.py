"""Peers for the action tests: a test PKI, HTTPS servers, an Azure AD token endpoint, an AMQP broker."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.executor.peers.amqp import AmqpPeer, RunningPeer
from tests.executor.peers.servers import Server, TokenEndpoint, ok, serve, server_tls
from tests.executor.peers.tls import Issued, TestCA


@dataclass
class Pki:
    ca: TestCA
    ca_file: Path
    server_cert: Path
    server_key: Path
    client: Issued  # issued by the test CA: the server that demands a client certificate trusts it
    folder: Path


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca = TestCA()
    cert, key = ca.issue("127.0.0.1", server=True).pem_files(folder, "server")
    return Pki(ca, ca.pem_file(folder), cert, key, ca.issue("Scheduler Client", server=False), folder)


@pytest.fixture
def target() -> Iterator[Server]:
    """A local HTTP target that answers 200 at once (a module with a target of its own overrides it)."""
    server = serve(ok)
    yield server
    server.close()


@pytest.fixture
def https_server(pki: Pki) -> Iterator[Server]:
    server = serve(ok, tls=server_tls(pki.server_cert, pki.server_key))
    yield server
    server.close()


@pytest.fixture
def mtls_server(pki: Pki) -> Iterator[Server]:
    """An HTTPS server that refuses every handshake without a client certificate from the test CA."""
    server = serve(ok, tls=server_tls(pki.server_cert, pki.server_key, client_ca=pki.ca_file))
    yield server
    server.close()


@pytest.fixture
def token_endpoint() -> Iterator[tuple[Server, TokenEndpoint]]:
    endpoint = TokenEndpoint(client_id="client-1", secret="s3cr3t-value")
    server = serve(endpoint)
    yield server, endpoint
    server.close()


@pytest.fixture
def amqp_peer() -> Iterator[AmqpPeer]:
    with RunningPeer() as peer:
        yield peer
