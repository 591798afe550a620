"""A minimal AMQP 1.0 broker peer for the Service Bus SDK, built on python-qpid-proton.

No Service Bus emulator runs here, so this real network peer stands in for one: it accepts a
connection (no TLS, SASL ANONYMOUS, as the SDK speaks to the emulator), answers the `$cbs`
put-token request with status-code 200, accepts every message sent to any other address, and
keeps what it received (messages, and the tokens presented) for the test to read back.

`duplicate_detection` behaves as a Service Bus entity with duplicate detection on: a message whose
MessageId the entity already holds is accepted (the sender succeeds) and dropped. `lose_acks` answers
that many deliveries as if the acknowledgement were lost on its way: the message is kept, the sender is
told the send failed (a `rejected` outcome), so it sends again.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from proton import Condition, Message
from proton.handlers import MessagingHandler
from proton.reactor import Container

from devhost.azurite import free_port


@dataclass
class Received:
    address: str
    message: Message


@dataclass
class AmqpPeer:
    port: int = 0
    received: list[Received] = field(default_factory=list)
    tokens: list[tuple[str, str]] = field(default_factory=list)  # (audience, token) of each put-token
    refuse_tokens: bool = False  # answer put-token with 401, as a broker does for a wrong key
    duplicate_detection: bool = False  # drop a message whose MessageId was received before (per address)
    lose_acks: int = 0  # deliveries still to answer `rejected` after keeping them
    deliveries: int = 0  # messages sent to the peer, duplicates included

    @property
    def endpoint(self) -> str:
        return f"sb://127.0.0.1:{self.port}"

    def wait_for(self, count: int, timeout: float) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return list(self.received)


class _Broker(MessagingHandler):
    def __init__(self, peer: AmqpPeer, stopping: threading.Event, listening: threading.Event) -> None:
        super().__init__(auto_accept=False)
        self.peer = peer
        self.stopping = stopping
        self.listening = listening
        self.cbs_replies: dict[Any, Any] = {}  # connection -> the link we answer put-token on

    def on_start(self, event: Any) -> None:
        self.acceptor = event.container.listen(f"127.0.0.1:{self.peer.port}")
        self.listening.set()
        event.container.schedule(0.05, self)

    def on_timer_task(self, event: Any) -> None:
        if self.stopping.is_set():
            self.acceptor.close()
            event.container.stop()
        else:
            event.container.schedule(0.05, self)

    def on_link_opening(self, event: Any) -> None:
        link = event.link
        if link.is_sender:
            link.source.address = link.remote_source.address
            link.target.address = link.remote_target.address
            if link.remote_source.address == "$cbs":
                self.cbs_replies[link.connection] = link
        else:
            link.target.address = link.remote_target.address
            link.source.address = link.remote_source.address

    def on_message(self, event: Any) -> None:
        address = event.link.remote_target.address
        message = event.message
        if address == "$cbs":
            properties = message.properties or {}
            self.peer.tokens.append((str(properties.get("name")), str(message.body)))
            status = 401 if self.peer.refuse_tokens else 200
            reply = Message(
                correlation_id=message.id,
                properties={"status-code": status, "status-description": "OK" if status == 200 else "Unauthorized"},
            )
            self.cbs_replies[event.link.connection].send(reply)
            self.accept(event.delivery)
            return
        self.peer.deliveries += 1
        duplicate = self.peer.duplicate_detection and any(
            r.address == address and r.message.id == message.id for r in self.peer.received
        )
        if not duplicate:
            self.peer.received.append(Received(address, message))
        if self.peer.lose_acks > 0:
            self.peer.lose_acks -= 1
            # A rejected outcome with its error (condition, description and info: the SDK reads all three).
            delivery = event.delivery
            delivery.local.condition = Condition("amqp:internal-error", "the acknowledgement was lost", {"lost": True})
            self.reject(delivery)
        else:
            self.accept(event.delivery)


class RunningPeer:
    """Context manager: the peer listening on a free loopback port in a background thread."""

    def __init__(self) -> None:
        self.peer = AmqpPeer(port=free_port())
        self._stopping = threading.Event()
        self._listening = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        Container(_Broker(self.peer, self._stopping, self._listening)).run()

    def __enter__(self) -> AmqpPeer:
        self._thread.start()
        if not self._listening.wait(5):
            raise RuntimeError("the AMQP peer did not start")
        return self.peer

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._thread.join(5)
