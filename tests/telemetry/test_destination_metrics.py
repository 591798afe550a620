"""The destinations' counts (shared/telemetry/destinations.py), read back from the OpenTelemetry SDK's in-memory
reader: `scheduler.destination.deferred` by destination and reason, `scheduler.destination.circuit` by destination
and new state."""

from __future__ import annotations

from shared import telemetry

DEFERRED, CIRCUIT = "scheduler.destination.deferred", "scheduler.destination.circuit"


def test_deferrals_are_counted_by_destination_and_reason(otel) -> None:
    telemetry.destination_deferred("127.0.0.1:8080", "PushBack")
    telemetry.destination_deferred("127.0.0.1:8080", "PushBack")
    telemetry.destination_deferred("127.0.0.1:8080", "CircuitOpen")
    telemetry.destination_deferred("servicebus:ns1", "CircuitOpen")
    assert otel.total(DEFERRED, destination="127.0.0.1:8080", reason="PushBack") == 2
    assert otel.total(DEFERRED, destination="127.0.0.1:8080", reason="CircuitOpen") == 1
    assert otel.total(DEFERRED, destination="servicebus:ns1") == 1
    assert {frozenset(p.attributes) for p in otel.points(DEFERRED)} == {frozenset({"destination", "reason"})}


def test_circuit_changes_are_counted_by_destination_and_new_state(otel) -> None:
    for circuit in ("Open", "HalfOpen", "Open", "HalfOpen", "Closed"):
        telemetry.circuit_changed("api.example.com", circuit)
    assert otel.total(CIRCUIT, destination="api.example.com", circuit="Open") == 2
    assert otel.total(CIRCUIT, destination="api.example.com", circuit="HalfOpen") == 2
    assert otel.total(CIRCUIT, destination="api.example.com", circuit="Closed") == 1
    assert otel.total(CIRCUIT, destination="127.0.0.1:8080") == 0


def test_with_telemetry_off_nothing_is_kept_and_nothing_fails() -> None:
    telemetry.destination_deferred("127.0.0.1:8080", "PushBack")  # the no-op providers (tests/telemetry/conftest.py)
    telemetry.circuit_changed("127.0.0.1:8080", "Open")
