"""What azd and the portal read: parameter placeholders as azd templates write them, and alert and workbook
queries naming the metrics and spans the app actually emits."""

from __future__ import annotations

import json
import re
from pathlib import Path

from shared.telemetry import ALL_METRICS
from shared.telemetry.hooks import EXECUTION_SPAN, LATENESS_MS

INFRA = Path(__file__).resolve().parents[2] / "infra"


def test_the_parameters_file_takes_the_environment_from_azd() -> None:
    parameters = json.loads((INFRA / "main.parameters.json").read_text())["parameters"]
    assert parameters["environmentName"] == {"value": "${AZURE_ENV_NAME}"}
    assert parameters["location"] == {"value": "${AZURE_LOCATION}"}


def test_alerts_and_workbook_query_what_the_app_emits() -> None:
    alerts = (INFRA / "modules" / "alerts.bicep").read_text()
    workbook = json.loads((INFRA / "dashboards" / "scheduler-workbook.json").read_text())
    queries = "\n".join(item["content"].get("query", "") for item in workbook["items"])
    text = alerts + queries
    named = set(re.findall(r'name == "([^"]+)"', text))
    for group in re.findall(r"name in \(([^)]*)\)", text):
        named |= set(re.findall(r'"([^"]+)"', group))
    assert named - {EXECUTION_SPAN} <= set(ALL_METRICS)  # no query names a metric the app does not emit
    assert set(ALL_METRICS) <= named  # and every metric is charted or alerted on
    for text in (alerts, queries):
        assert f'name == "{EXECUTION_SPAN}"' in text and LATENESS_MS in text
