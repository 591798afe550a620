"""The infra checks can fail: custom checkov checks, the syntax check and the report judge.

Most tests need the tool venvs that infra/check.sh creates under .local/ and skip without
them. The secret-detection rules are plain Python and always run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INFRA = REPO / "infra"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHECKOV = REPO / ".local" / "venv-checkov" / "bin" / "checkov"
CHECKOV_PYTHON = REPO / ".local" / "venv-checkov" / "bin" / "python"
TS_PYTHON = REPO / ".local" / "venv-infra" / "bin" / "python"

needs_checkov = pytest.mark.skipif(not CHECKOV.exists(), reason="run infra/check.sh once to install checkov")
needs_tree_sitter = pytest.mark.skipif(not TS_PYTHON.exists(), reason="run infra/check.sh once to install tree-sitter")


def _load_utils():
    spec = importlib.util.spec_from_file_location("sched_check_utils", INFRA / "checks" / "sched_check_utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


utils = _load_utils()


def _tool_env() -> dict[str, str]:
    """The caller's environment without anything that would point the tool venvs at the app's packages."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    env.update(BC_SKIP_MAPPING="TRUE", CKV_SKIP_PACKAGE_UPDATE_CHECK="TRUE")
    return env


def _checkov(directory: Path, tmp_path: Path) -> Path:
    report = tmp_path / "report.json"
    with report.open("w") as out:
        proc = subprocess.run(
            [
                str(CHECKOV),
                "--directory",
                str(directory),
                "--framework",
                "bicep",
                "--skip-download",
                "--output",
                "json",
                "--external-checks-dir",
                str(INFRA / "checks"),
            ],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            env=_tool_env(),
            cwd=tmp_path,
            timeout=240,
        )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return report


def _judge(report: Path, infra_dir: Path, *required: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHECKOV_PYTHON), str(INFRA / "scripts" / "checkov_report.py"), str(report), str(infra_dir), *required],
        capture_output=True,
        text=True,
        env=_tool_env(),
        timeout=60,
    )


# --- secret detection rules (no tools needed) -------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AzureWebJobsStorage", "UseDevelopmentStorage=true"),
        ("WEBSITE_CONTENTAZUREFILECONNECTIONSTRING", "anything"),
        ("APPINSIGHTS_INSTRUMENTATIONKEY", "00000000-0000-0000-0000-000000000000"),
        ("ServiceBus__sharedAccessKey", "x"),
        ("STORAGE", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc=="),
        ("BUS", "Endpoint=sb://a.servicebus.windows.net/;SharedAccessKeyName=s;SharedAccessKey=k"),
        ("QUEUE_URL", "https://a.queue.core.windows.net/q?sv=2022-11-02&sig=abc"),
        ("APPLICATIONINSIGHTS_CONNECTION_STRING", "InstrumentationKey=0000;IngestionEndpoint=https://x/"),
        ("DB", "Server=tcp:db;User ID=u;Password=p"),
        ("KEY", "${storage.listKeys().keys[0].value}"),
        ("KEY2", {"function": {"type": "list_func", "parameters": {"func_name": "listSecrets"}}}),
    ],
)
def test_secret_problem_flags_key_based_values(name, value):
    assert utils.secret_problem(name, value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AzureWebJobsStorage__credential", "managedidentity"),
        ("AzureWebJobsStorage__clientId", "identityClientId"),
        ("AzureWebJobsStorage__tableServiceUri", "https://a.table.core.windows.net/"),
        ("APPLICATIONINSIGHTS_CONNECTION_STRING", "applicationInsightsConnectionString"),
        ("APPLICATIONINSIGHTS_AUTHENTICATION_STRING", "ClientId=${identityClientId};Authorization=AAD"),
        ("REGION_NAME", {"function": {"type": "resource_group", "property_name": "location"}}),
        ("SCHEDULER_ALLOW_PRIVATE_TARGETS", "false"),
        ("PLAYLIST", "https://example.com/list?id=1"),
    ],
)
def test_secret_problem_accepts_identity_based_values(name, value):
    assert utils.secret_problem(name, value) is None


# --- custom checkov checks on bad and good fixtures --------------------------------------------


@pytest.fixture(scope="module")
def policy_results(tmp_path_factory) -> dict[tuple[str, str], str]:
    if not CHECKOV.exists():
        pytest.skip("run infra/check.sh once to install checkov")
    report = json.loads(_checkov(FIXTURES / "policy", tmp_path_factory.mktemp("policy")).read_text())
    assert report["summary"]["parsing_errors"] == 0
    outcomes: dict[tuple[str, str], str] = {}
    for key in ("passed_checks", "failed_checks"):
        for record in report["results"][key]:
            outcomes[(record["resource"], record["check_id"])] = record["check_result"]["result"]
    return outcomes


EXPECTED = {
    # CKV_SCHED_1 / 2: storage
    ("Microsoft.Storage/storageAccounts.sharedKeyOn", "CKV_SCHED_1"): "FAILED",
    ("Microsoft.Storage/storageAccounts.sharedKeyOn", "CKV_SCHED_2"): "FAILED",
    ("Microsoft.Storage/storageAccounts.unset", "CKV_SCHED_1"): "FAILED",
    ("Microsoft.Storage/storageAccounts.unset", "CKV_SCHED_2"): "FAILED",
    ("Microsoft.Storage/storageAccounts.locked", "CKV_SCHED_1"): "PASSED",
    ("Microsoft.Storage/storageAccounts.locked", "CKV_SCHED_2"): "PASSED",
    # CKV_SCHED_3: Application Insights
    ("Microsoft.Insights/components.localAuthOn", "CKV_SCHED_3"): "FAILED",
    ("Microsoft.Insights/components.localAuthUnset", "CKV_SCHED_3"): "FAILED",
    ("Microsoft.Insights/components.entraOnly", "CKV_SCHED_3"): "PASSED",
    # CKV_SCHED_4: secrets in settings
    ("Microsoft.Web/sites.connString", "CKV_SCHED_4"): "FAILED",
    ("Microsoft.Web/sites.listKeysCall", "CKV_SCHED_4"): "FAILED",
    ("Microsoft.Web/sites.sharedAccessKey", "CKV_SCHED_4"): "FAILED",
    ("Microsoft.Web/sites.sasUrl", "CKV_SCHED_4"): "FAILED",
    ("Microsoft.Web/sites.connectionStringsBlock", "CKV_SCHED_4"): "FAILED",
    ("Microsoft.Web/sites.computedSettings", "CKV_SCHED_4"): "FAILED",
    ("Microsoft.Web/sites/config.appSettingsConfig", "CKV_SCHED_4"): "FAILED",
    ("Microsoft.Web/sites.deploymentByKey", "CKV_SCHED_4"): "PASSED",
    ("Microsoft.Web/sites.identityOnly", "CKV_SCHED_4"): "PASSED",
    # CKV_SCHED_5: identity-based host and deployment storage
    ("Microsoft.Web/sites.connString", "CKV_SCHED_5"): "FAILED",
    ("Microsoft.Web/sites.deploymentByKey", "CKV_SCHED_5"): "FAILED",
    ("Microsoft.Web/sites.listKeysCall", "CKV_SCHED_5"): "PASSED",
    ("Microsoft.Web/sites.identityOnly", "CKV_SCHED_5"): "PASSED",
    # CKV_SCHED_6: Service Bus
    ("Microsoft.ServiceBus/namespaces.sasOn", "CKV_SCHED_6"): "FAILED",
    ("Microsoft.ServiceBus/namespaces.oldTls", "CKV_SCHED_6"): "FAILED",
    ("Microsoft.ServiceBus/namespaces.entraOnlyBus", "CKV_SCHED_6"): "PASSED",
}


@needs_checkov
@pytest.mark.parametrize(("resource", "check_id"), sorted(EXPECTED))
def test_custom_check_outcome(policy_results, resource, check_id):
    assert policy_results.get((resource, check_id)) == EXPECTED[(resource, check_id)]


@needs_checkov
def test_every_custom_check_id_is_exercised(policy_results):
    ids = {value for name, value in vars(utils).items() if isinstance(value, str) and value.startswith("CKV_SCHED_")}
    assert ids == {check_id for _, check_id in EXPECTED}
    for check_id in ids:
        outcomes = {result for (_, cid), result in policy_results.items() if cid == check_id}
        assert outcomes == {"PASSED", "FAILED"}, check_id


# --- syntax check ------------------------------------------------------------------------------


@needs_tree_sitter
def test_syntax_check_reports_file_and_line(tmp_path):
    broken = tmp_path / "infra"
    shutil.copytree(FIXTURES / "broken", broken)
    proc = subprocess.run(
        [str(TS_PYTHON), str(INFRA / "scripts" / "bicep_syntax.py"), str(broken)],
        capture_output=True,
        text=True,
        env=_tool_env(),
        timeout=60,
    )
    assert proc.returncode == 1
    assert "infra/broken.bicep:" in proc.stdout
    assert "syntax: FAILED" in proc.stdout


@needs_tree_sitter
def test_syntax_check_catches_module_and_parameter_file_mistakes(tmp_path):
    copy = tmp_path / "infra"
    shutil.copytree(INFRA, copy, ignore=shutil.ignore_patterns("checks", "scripts", "*.md", "*.sh"))
    main = copy / "main.bicep"
    main.write_text(main.read_text().replace("retentionInDays: logRetentionInDays", "retentionDays: x"))
    params = json.loads((copy / "main.parameters.json").read_text())
    params["parameters"]["corsAllowedOrigins"] = {"value": ["*"]}
    params["parameters"]["noSuchParameter"] = {"value": 1}
    (copy / "main.parameters.json").write_text(json.dumps(params))
    proc = subprocess.run(
        [str(TS_PYTHON), str(INFRA / "scripts" / "bicep_syntax.py"), str(copy)],
        capture_output=True,
        text=True,
        env=_tool_env(),
        timeout=60,
    )
    assert proc.returncode == 1
    assert "has no parameter 'retentionDays'" in proc.stdout
    assert "'noSuchParameter' is not declared" in proc.stdout
    assert "never '*'" in proc.stdout


@needs_tree_sitter
def test_syntax_check_passes_on_infra():
    proc = subprocess.run(
        [str(TS_PYTHON), str(INFRA / "scripts" / "bicep_syntax.py"), str(INFRA)],
        capture_output=True,
        text=True,
        env=_tool_env(),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout


# --- report judge --------------------------------------------------------------------------------


@needs_checkov
def test_judge_fails_on_a_file_checkov_cannot_parse(tmp_path):
    report = _checkov(FIXTURES / "broken", tmp_path)
    assert json.loads(report.read_text())["summary"]["parsing_errors"] == 1  # checkov itself exits 0 here
    proc = _judge(report, FIXTURES / "broken", "CKV_SCHED_1")
    assert proc.returncode == 1
    assert "parsing error" in proc.stdout
    assert "required check CKV_SCHED_1 did not pass" in proc.stdout


def _fake_infra(tmp_path: Path, readme: str = "") -> Path:
    infra = tmp_path / "infra"
    infra.mkdir()
    (infra / "README.md").write_text(readme)
    (tmp_path / "azure.yaml").write_text((REPO / "azure.yaml").read_text())
    return infra


def _fake_report(tmp_path: Path, passed=(), skipped=(), parsing_errors=()) -> Path:
    def record(check_id, comment=None):
        result = {"result": "SKIPPED" if comment is not None else "PASSED"}
        if comment is not None:
            result["suppress_comment"] = comment
        return {
            "check_id": check_id,
            "check_name": check_id,
            "check_result": result,
            "resource": "Microsoft.Web/sites.app",
            "file_path": "/main.bicep",
            "file_line_range": [1, 2],
        }

    report = {
        "check_type": "bicep",
        "results": {
            "passed_checks": [record(c) for c in passed],
            "failed_checks": [],
            "skipped_checks": [record(c, comment) for c, comment in skipped],
            "parsing_errors": list(parsing_errors),
        },
        "summary": {"passed": len(passed), "failed": 0, "skipped": len(skipped), "parsing_errors": len(parsing_errors)},
    }
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    return path


@needs_checkov
def test_judge_requires_every_listed_check_to_pass(tmp_path):
    infra = _fake_infra(tmp_path)
    report = _fake_report(tmp_path, passed=["CKV_AZURE_14"])
    assert _judge(report, infra, "CKV_AZURE_14").returncode == 0
    proc = _judge(report, infra, "CKV_AZURE_14", "CKV_AZURE_15")
    assert proc.returncode == 1
    assert "required check CKV_AZURE_15 did not pass" in proc.stdout


@needs_checkov
def test_judge_rejects_parsing_errors_and_undocumented_skips(tmp_path):
    infra = _fake_infra(tmp_path, readme="CKV_AZURE_17 is explained here")
    ok = _fake_report(tmp_path, passed=["CKV_AZURE_14"], skipped=[("CKV_AZURE_17", "mTLS is not used")])
    assert _judge(ok, infra, "CKV_AZURE_14").returncode == 0

    undocumented = _fake_report(tmp_path, passed=["CKV_AZURE_14"], skipped=[("CKV_AZURE_222", "because")])
    proc = _judge(undocumented, infra, "CKV_AZURE_14")
    assert proc.returncode == 1 and "CKV_AZURE_222 is not explained" in proc.stdout

    unparsed = _fake_report(tmp_path, passed=["CKV_AZURE_14"], parsing_errors=["/x/main.bicep"])
    proc = _judge(unparsed, infra, "CKV_AZURE_14")
    assert proc.returncode == 1 and "could not parse /x/main.bicep" in proc.stdout


@needs_checkov
def test_judge_checks_azure_yaml(tmp_path):
    infra = _fake_infra(tmp_path)
    (tmp_path / "azure.yaml").write_text(
        "name: x\nservices:\n  api:\n    project: ./src\n    language: js\n    host: function\n"
    )
    proc = _judge(_fake_report(tmp_path, passed=["CKV_AZURE_14"]), infra, "CKV_AZURE_14")
    assert proc.returncode == 1
    assert "language: python" in proc.stdout and "project: ." in proc.stdout
