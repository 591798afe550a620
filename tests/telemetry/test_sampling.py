"""What the deployment sends to Application Insights is bounded (shared/telemetry/setup.py): traces sampled at most
SCHEDULER_TELEMETRY_TRACES_PER_SECOND a second (default 5), the logs of an unsampled trace dropped with it, and the
Azure SDK's span per storage request off unless asked for. Checked on the distro itself, configured in a process
of its own (it sets global providers) with a connection string whose endpoints are loopback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shared.telemetry.setup import TRACES_PER_SECOND, TelemetrySettings, azure_monitor_options

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = (
    "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/;"
    "LiveEndpoint=http://127.0.0.1:9/"
)
PROBE = """
import json, logging
from opentelemetry import trace
from shared.telemetry.setup import configure
print(json.dumps({"destination": configure(), "sampler": trace.get_tracer_provider().sampler.get_description()}))
"""


def test_settings_read_the_rate_and_the_storage_spans_switch() -> None:
    assert TelemetrySettings.from_environment({}).traces_per_second == TRACES_PER_SECOND == 5.0
    read = TelemetrySettings.from_environment(
        {"SCHEDULER_TELEMETRY_TRACES_PER_SECOND": "0.5", "SCHEDULER_TELEMETRY_STORAGE_SPANS": "true"}
    )
    assert (read.traces_per_second, read.storage_spans) == (0.5, True)
    for bad in ("0", "-1", "many", "inf", "nan"):
        assert TelemetrySettings.from_environment({"SCHEDULER_TELEMETRY_TRACES_PER_SECOND": bad}).traces_per_second == 5


def test_the_options_leave_storage_spans_off_unless_asked() -> None:
    off = azure_monitor_options(TelemetrySettings())
    assert off["traces_per_second"] == 5.0 and off["enable_trace_based_sampling_for_logs"] is True
    assert off["instrumentation_options"]["azure_sdk"] == {"enabled": False}  # type: ignore[index]
    on = azure_monitor_options(TelemetrySettings(storage_spans=True))
    assert "azure_sdk" not in on["instrumentation_options"]  # type: ignore[operator]


@pytest.mark.parametrize(("rate", "shown"), [(None, "5.0"), ("0.5", "0.5")])
def test_the_distro_samples_at_the_rate(rate: str | None, shown: str) -> None:
    env = {"APPLICATIONINSIGHTS_CONNECTION_STRING": LOOPBACK, "PATH": "/usr/bin:/bin"}
    if rate is not None:
        env["SCHEDULER_TELEMETRY_TRACES_PER_SECOND"] = rate
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["destination"] == "azure-monitor"
    assert "RateLimited" in found["sampler"] and shown in found["sampler"], found
