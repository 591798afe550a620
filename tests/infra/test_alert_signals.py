"""The alert rules and the availability test in infra/ exist and watch the right signals
(infra/scripts/bicep_signals.py, run by infra/check.sh): the real templates pass, each way of breaking them is caught.

Needs the tree-sitter venv that infra/check.sh creates under .local/ (skips without it).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.infra.test_checks import INFRA, REPO, TS_PYTHON, _tool_env

pytestmark = pytest.mark.skipif(not TS_PYTHON.exists(), reason="run infra/check.sh once to install tree-sitter")


def _signals(infra: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TS_PYTHON), str(INFRA / "scripts" / "bicep_signals.py"), str(infra), str(REPO)],
        capture_output=True,
        text=True,
        env=_tool_env(),
        timeout=120,
    )


def test_the_templates_watch_the_heartbeat_the_health_endpoint_and_silent_jobs() -> None:
    result = _signals(INFRA)
    assert result.returncode == 0, result.stdout + result.stderr
    for watched in (
        "alerts.bicep:heartbeat",
        "availability.bicep:healthTest",
        "availability.bicep:healthAlert",
        "silence.bicep:expectationBroken",
        "silence.bicep:noSuccess",
    ):
        assert watched in result.stdout


@pytest.mark.parametrize(
    ("template", "old", "new", "said"),
    [
        # A metric renamed in a query (or in the app) leaves the rule watching nothing.
        (
            "modules/alerts.bicep",
            '"scheduler.dispatcher.heartbeats"',
            '"scheduler.dispatcher.heartbeat"',
            "names 'scheduler.dispatcher.heartbeat', which the app's telemetry does not emit",
        ),
        (
            "modules/alerts.bicep",
            "param heartbeatMissedSeconds int = 120",
            "param heartbeatMissedSeconds int = 300",
            "missing: a log alert on scheduler.dispatcher.heartbeats",
        ),
        ("modules/availability.bicep", "/api/health'", "/api/healthz'", "missing: a standard web test of GET"),
        (
            "modules/availability.bicep",
            "webTestId: healthTest.id",
            "webTestId: applicationInsightsId",
            "missing: a metric alert with WebtestLocationAvailabilityCriteria",
        ),
        (
            "modules/silence.bicep",
            "name: 'Job'",
            "name: 'Collection2'",
            "missing: a log alert on scheduler.job.silence",
        ),
        (
            "modules/silence.bicep",
            'customDimensions["scheduler.collection"]) =~',
            'customDimensions["collection"]) =~',
            "names 'collection', which the app's telemetry does not emit",
        ),
        (
            "dashboards/scheduler-workbook.json",
            "scheduler.occurrences.fired",
            "scheduler.occurrences.fird",
            "scheduler-workbook.json: the query names 'scheduler.occurrences.fird'",
        ),
        (
            "main.bicep",
            "module silence 'modules/silence.bicep'",
            "module silence 'modules/workbook.bicep'",
            "silence.bicep: holds alert rules or tests, but main.bicep does not deploy it",
        ),
    ],
)
def test_a_rule_that_watches_the_wrong_signal_is_caught(
    tmp_path: Path, template: str, old: str, new: str, said: str
) -> None:
    copy = tmp_path / "infra"
    shutil.copytree(INFRA, copy, ignore=shutil.ignore_patterns("*.pyc", "__pycache__"))
    path = copy / template
    source = path.read_text()
    assert old in source
    path.write_text(source.replace(old, new))
    result = _signals(copy)
    assert result.returncode == 1 and said in result.stdout, result.stdout + result.stderr
