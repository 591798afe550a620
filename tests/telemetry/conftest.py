"""The OpenTelemetry SDK with its in-memory exporters, installed for one test and removed after it; the runtimes
whose spans and metrics are read run on the memory store (what is counted and traced is logic)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from shared import telemetry
from shared.store.memory import MemoryStorage
from shared.store.storage import Storage


@dataclass
class Collected:
    spans_exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    # Last points seen per metric: a gauge reports only in the collection after it was set.
    seen: dict[str, list[Any]] = field(default_factory=dict)

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        found = list(self.spans_exporter.get_finished_spans())
        return [s for s in found if name is None or s.name == name]

    def points(self, metric: str) -> list[Any]:
        """The data points of `metric` (sums and histograms cumulative; a gauge's last value)."""
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for item in scope.metrics:
                    self.seen[item.name] = list(item.data.data_points)
        return self.seen.get(metric, [])

    def total(self, metric: str, **attributes: str) -> float:
        return sum(p.value for p in self.points(metric) if all(p.attributes.get(k) == v for k, v in attributes.items()))


@pytest.fixture
def otel() -> Iterator[Collected]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    telemetry.use_providers(tracer_provider, meter_provider)
    try:
        yield Collected(exporter, reader)
    finally:
        telemetry.disable()
        tracer_provider.shutdown()
        meter_provider.shutdown()


@pytest.fixture
def storage(memory_storage: MemoryStorage) -> Storage | None:
    return memory_storage
