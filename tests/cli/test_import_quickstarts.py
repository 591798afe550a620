"""`scheduler import` of real-world templates against the real function_app.py under the local host: templates
of our own written in the shape of the Azure quickstarts `scheduler-webapp` (an App Service plan and site the
import ignores, a job calling `reference(...).hostNames[0]`, a `retryPolicy` misplaced under `request`) and
`101-scheduler-service-bus` (a namespace, queue and rule the import ignores, `listKeys()` for the job's
key, the recurrence from an object parameter); the repository's sample template; every problem of a
template in one run; a listKeys secret asked for in a terminal; `--what-if` finding what the import will
meet (a missing collection, a quota); and an export that imports back into another resource group.

The host sends Service Bus actions to a closed loopback port (SCHEDULER_SERVICEBUS_ENDPOINT): the imported
every-minute job never leaves the machine."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from devhost.azurite import free_port
from tests.support.local_host import local_host

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = Path(__file__).parent / "templates"
WEBAPP, SERVICE_BUS = TEMPLATES / "scheduler-webapp.json", TEMPLATES / "scheduler-service-bus.json"
SAMPLE = ROOT / "docs" / "examples" / "azuredeploy.json"
V = {"api-version": "2016-03-01"}
URI = "resources[2].resources[0].properties.action.request.uri"
SAS_KEY = "resources[1].resources[0].properties.action.serviceBusQueueMessage.authentication.sasKey"


@pytest.fixture(scope="module")
def host_url(azurite) -> Iterator[str]:
    with local_host(azurite, SCHEDULER_SERVICEBUS_ENDPOINT=f"sb://127.0.0.1:{free_port()}") as base:
        yield base


def _rows(result) -> list[tuple[str, str, str]]:
    assert result.exit_code in (0, 1), result.stderr
    return [(r["result"], r["type"], r["resource"]) for r in json.loads(result.stdout)]


def _job(host_url: str, group: str, collection: str, job: str) -> dict:
    url = (
        f"{host_url}/subscriptions/cli-sub/resourceGroups/{group}/providers/Microsoft.Scheduler/"
        f"jobCollections/{collection}/jobs/{job}"
    )
    answer = requests.get(url, params=V, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()["properties"]


def test_webapp_shaped_template_imports_with_set_for_reference(cli, host_url: str, http_target) -> None:
    args = [
        "import",
        str(WEBAPP),
        "-g",
        "web-rg",
        "-l",
        "westeurope",
        "-p",
        "jobCollectionName=web-jobs",
        "-p",
        "jobName=wake-site",
        "--set",
        f"{URI}={http_target.url}/",
    ]
    what_if = cli("-o", "json", *args, "--what-if")
    assert _rows(what_if) == [
        ("create", "collection", "web-rg/web-jobs"),
        ("create", "job", "web-rg/web-jobs/wake-site"),
        ("ignored", "Microsoft.Web/serverfarms", "[parameters('planName')]"),
        ("ignored", "Microsoft.Web/sites", "[parameters('siteName')]"),
    ]
    # The quickstart's retryPolicy under request is ignored by the API (so the job retries 4 x 30 s): said.
    assert (
        "warning: resources[2].resources[0].properties.action.request.retryPolicy: not a member of HttpRequest: "
        "2016-03-01 ignores it, the newer api-version refuses it (did you mean 'properties.action.retryPolicy'?)"
    ) in what_if.stderr

    applied = _rows(cli("-o", "json", *args))
    assert [r[0] for r in applied] == ["created", "created", "ignored", "ignored"]
    job = _job(host_url, "web-rg", "web-jobs", "wake-site")
    assert job["action"]["request"]["uri"] == f"{http_target.url}/"
    assert job["recurrence"]["schedule"]["hours"] == [10, 12] and job["recurrence"]["schedule"]["minutes"] == [0, 30]
    assert [r[0] for r in _rows(cli("-o", "json", *args))][:2] == ["unchanged", "unchanged"]


def test_service_bus_shaped_template_imports_with_the_key_supplied(cli, host_url: str) -> None:
    args = ["import", str(SERVICE_BUS), "-g", "sb-rg", "-l", "westeurope", "-p", "namespaceName=quickstart-ns"]
    missing = cli(*args, "--what-if")  # not a terminal: the key is a problem to solve with --set
    assert missing.exit_code == 2
    assert missing.stderr.splitlines() == [
        "error: InvalidTemplate: 1 problem (nothing was written):",
        f"  - {SAS_KEY}: [listKeys(variables('sendRule'), '2018-01-01-preview').primaryKey] is a key of a deployed "
        f"resource (in a terminal the import asks for it); pass --set '{SAS_KEY}=VALUE'",
    ]

    supplied = [*args, "--set", f"{SAS_KEY}=c2VjcmV0LWtleQ=="]
    assert _rows(cli("-o", "json", *supplied, "--what-if")) == [
        ("create", "collection", "sb-rg/QueuePoster"),
        ("create", "job", "sb-rg/QueuePoster/PostMessage"),
        ("ignored", "Microsoft.ServiceBus/namespaces", "quickstart-ns"),
        ("ignored", "Microsoft.ServiceBus/namespaces/queues", "autoposted"),
        ("ignored", "Microsoft.ServiceBus/namespaces/queues/authorizationRules", "Scheduler"),
    ]
    assert [r[0] for r in _rows(cli("-o", "json", *supplied))][:2] == ["created", "created"]
    job = _job(host_url, "sb-rg", "QueuePoster", "PostMessage")
    message = job["action"]["serviceBusQueueMessage"]
    assert message["namespace"] == "quickstart-ns" and message["queueName"] == "autoposted"
    assert message["authentication"] == {"sasKeyName": "Scheduler", "type": "sharedAccessKey"}  # key: write-only
    assert job["recurrence"] == {"frequency": "minute", "interval": 1}


def test_a_listkeys_secret_is_asked_for_in_a_terminal(host_url: str) -> None:
    primary, replica = pty.openpty()
    env = {**os.environ, "SCHEDULER_ENDPOINT": host_url, "SCHEDULER_SUBSCRIPTION": "cli-sub"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scheduler_cli",
            "import",
            str(SERVICE_BUS),
            "-g",
            "prompt-rg",
            "-l",
            "westus",
            "-p",
            "namespaceName=prompted-ns",
        ],
        stdin=replica,
        stdout=subprocess.PIPE,
        stderr=replica,
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )  # no controlling terminal: the prompt reads the pty on stdin
    os.close(replica)
    seen = b""
    deadline = time.monotonic() + 60
    while b"hidden, empty to skip" not in seen and time.monotonic() < deadline:
        if select.select([primary], [], [], 1)[0]:
            seen += os.read(primary, 4096)
    assert f"{SAS_KEY} is [listKeys(".encode() in seen, seen
    # getpass flushes input typed before it turns echo off: type once it has
    while termios.tcgetattr(primary)[3] & termios.ECHO and time.monotonic() < deadline:
        time.sleep(0.05)
    os.write(primary, b"typed-secret\n")
    out, _ = process.communicate(timeout=60)
    os.close(primary)
    assert process.returncode == 0, out
    assert b"typed-secret" not in out
    message = _job(host_url, "prompt-rg", "QueuePoster", "PostMessage")["action"]["serviceBusQueueMessage"]
    assert message["namespace"] == "prompted-ns" and "sasKey" not in message["authentication"]  # stored, unshown


def test_every_problem_of_a_template_is_reported_in_one_run(cli) -> None:
    result = cli("import", str(WEBAPP), "-g", "web-rg", "--what-if")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: InvalidTemplate: 4 problems (nothing was written):",
        "  - parameters.jobCollectionName: no value; pass --parameter jobCollectionName=VALUE",
        "  - parameters.location.defaultValue: resourceGroup().location needs --location",
        "  - parameters.jobName: no value; pass --parameter jobName=VALUE",
        f"  - {URI}: reference() reads a deployed resource, which an offline import cannot (in [concat('http://', "
        "reference(resourceId('Microsoft.Web/sites', parameters('siteName'))).hostNames[0])]); "
        f"pass --set '{URI}=VALUE'",
    ]  # planName and siteName only serve the ignored site: never asked for


def test_the_sample_template_of_the_readme(cli, host_url: str) -> None:
    args = ["import", str(SAMPLE), "-g", "sample-rg", "-l", "westeurope"]
    assert _rows(cli("-o", "json", *args, "--what-if")) == [
        ("create", "collection", "sample-rg/imported-jobs"),
        ("create", "job", "sample-rg/imported-jobs/hourly-report"),
        ("create", "job", "sample-rg/imported-jobs/weekday-mornings"),
        ("ignored", "Microsoft.Web/sites", "[parameters('siteName')]"),
    ]
    table = cli(*args)
    assert table.exit_code == 0, table.stderr
    assert table.stdout.count("created") == 3 and "warning" not in table.stderr
    assert (
        _job(host_url, "sample-rg", "imported-jobs", "hourly-report")["action"]["request"]["uri"]
        == "http://127.0.0.1:8080/imported/hourly"
    )


def _export_of(collection: str, group: str, jobs: list[dict], sku: str = "Standard") -> dict:
    base = f"/subscriptions/old/resourceGroups/{group}/providers/Microsoft.Scheduler/jobCollections/{collection}"
    return {
        "value": [
            {
                "id": base,
                "type": "Microsoft.Scheduler/jobCollections",
                "name": collection,
                "location": "westus",
                "properties": {"sku": {"name": sku}},
            },
            *(
                {
                    "id": f"{base}/jobs/{job['name']}",
                    "type": "Microsoft.Scheduler/jobCollections/jobs",
                    "name": f"{collection}/{job['name']}",
                    "properties": job["properties"],
                }
                for job in jobs
            ),
        ]
    }


def _http(name: str, frequency: str = "Hour") -> dict:
    return {
        "name": name,
        "properties": {
            "startTime": "2026-01-01T00:00:00Z",
            "recurrence": {"frequency": frequency},
            "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
        },
    }


def test_what_if_finds_what_the_import_will_meet(cli, tmp_path: Path) -> None:
    jobs_only = _export_of("elsewhere", "old-rg", [_http(f"j{i}") for i in range(3)])
    jobs_only["value"] = jobs_only["value"][1:]  # the jobs, aimed at a collection nobody creates
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps(jobs_only))
    what_if = cli("-o", "json", "import", str(path), "-g", "other-rg", "--what-if")
    assert what_if.exit_code == 1
    assert {(r["result"], r["detail"]) for r in json.loads(what_if.stdout)} == {
        (
            "fails",
            "job collection 'elsewhere' does not exist in resource group 'other-rg' (subscription 'cli-sub'), "
            "and this import does not create it",
        )
    }

    free = _export_of("small", "free-rg", [*(_http(f"h{i}") for i in range(6)), _http("fast", "Minute")], sku="Free")
    path.write_text(json.dumps(free))
    rows = json.loads(cli("-o", "json", "import", str(path), "--what-if").stdout)
    verdicts = {r["resource"].rsplit("/", 1)[-1]: (r["result"], r["detail"]) for r in rows}
    assert [verdicts[f"h{i}"][0] for i in range(6)] == ["create"] * 5 + ["fails"]
    assert (
        verdicts["h5"][1] == "QuotaExceeded: job collection 'small' would hold more than its 5 jobs "
        "(maxJobCount on the Free plan)"
    )
    assert verdicts["fast"][0] == "fails" and "more often than its job collection allows" in verdicts["fast"][1]
    applied = json.loads(cli("-o", "json", "import", str(path)).stdout)  # the API agrees
    assert sorted(r["resource"].rsplit("/", 1)[-1] for r in applied if r["result"] == "failed") == ["fast", "h5"]


def test_an_export_imports_back_into_another_group(cli, host_url: str, tmp_path: Path) -> None:
    assert cli("collections", "create", "-g", "exp-rg", "-c", "source", "-l", "westus").exit_code == 0
    job = tmp_path / "job.json"
    job.write_text(
        json.dumps(
            {
                "properties": {
                    **_http("x")["properties"],
                    "action": {
                        "type": "Http",
                        "request": {
                            "uri": "http://127.0.0.1:9/",
                            "method": "POST",
                            "body": "hi",
                            "authentication": {"type": "Basic", "username": "u", "password": "p"},
                        },
                    },
                }
            }
        )
    )
    assert cli("jobs", "create", "-g", "exp-rg", "-c", "source", "-n", "guarded", "-f", str(job)).exit_code == 0
    job.write_text(json.dumps(_http("plain")))
    assert cli("jobs", "create", "-g", "exp-rg", "-c", "source", "-n", "plain", "-f", str(job)).exit_code == 0
    exported = tmp_path / "export.json"
    ran = cli("export", "-g", "exp-rg", "-c", "source", "-f", str(exported))
    # The message wraps at the terminal's width, wherever the (long) temporary path puts the break.
    assert ran.exit_code == 0 and "scheduler import" in " ".join(ran.stdout.split())
    assert ran.stderr == (
        "warning: job guarded: write-only secrets are not exported "
        "(properties.action.request.authentication.password); set them again after import\n"
    )
    what_if = json.loads(cli("-o", "json", "import", str(exported), "-g", "copy-rg", "--what-if").stdout)
    assert [(r["result"], r["resource"]) for r in what_if][:2] == [
        ("create", "copy-rg/source"),
        ("fails", "copy-rg/source/guarded"),
    ]
    assert "password" in what_if[1]["detail"].lower()
    document = json.loads(exported.read_text())
    document["value"][1]["properties"]["action"]["request"]["authentication"]["password"] = "p"
    exported.write_text(json.dumps(document))
    first = _rows(cli("-o", "json", "import", str(exported), "-g", "copy-rg"))
    assert [r[0] for r in first] == ["created", "created", "created"]
    assert _job(host_url, "copy-rg", "source", "plain")["action"]["request"]["uri"] == "http://127.0.0.1:9/"
    again = _rows(cli("-o", "json", "import", str(exported), "-g", "copy-rg"))
    assert [r[0] for r in again] == ["unchanged", "updated", "unchanged"]  # the secret cannot be compared
