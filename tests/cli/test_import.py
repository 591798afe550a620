"""`scheduler import` against the real function_app.py under the local host, on a template written in the
shape of the retired service's quickstart templates (parameters with defaults and allowed values, variables,
concat/format/resourceGroup/resourceId, jobs nested in the collection and at the top level, Http and
StorageQueue actions with recurrence and retry policies) and on an exported resource list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import requests

V = {"api-version": "2016-03-01"}
RG = "import-rg"


def quickstart_template() -> dict[str, Any]:
    depends = ["[resourceId('Microsoft.Scheduler/jobCollections', parameters('jobCollectionName'))]"]
    return {
        "$schema": "https://schema.management.azure.com/schemas/2015-01-01/deploymentTemplate.json#",
        "contentVersion": "1.0.0.0",
        "parameters": {
            "jobCollectionName": {"type": "string", "defaultValue": "quickstart-jc"},
            "location": {"type": "string", "defaultValue": "[resourceGroup().location]"},
            "sku": {
                "type": "string",
                "defaultValue": "Standard",
                "allowedValues": ["Free", "Standard", "P10Premium", "P20Premium"],
            },
            "httpUri": {"type": "string"},
            "storageAccountName": {"type": "string", "defaultValue": "quickstartstore"},
            "sasToken": {"type": "securestring"},
        },
        "variables": {
            "queueName": "[concat(parameters('jobCollectionName'), '-queue')]",
            "retry": {"retryType": "Fixed", "retryInterval": "00:01:00", "retryCount": 2},
        },
        "resources": [
            {  # a top-level job listed before its collection: the import still creates the collection first
                "apiVersion": "2016-03-01",
                "type": "Microsoft.Scheduler/jobCollections/jobs",
                "name": "[concat(parameters('jobCollectionName'), '/', 'http-weekly')]",
                "dependsOn": depends,
                "properties": {
                    "state": "Enabled",
                    "startTime": "2026-01-05T00:00:00Z",
                    "action": {
                        "type": "Https",
                        "request": {
                            "uri": "[concat(parameters('httpUri'), '/weekly')]",
                            "method": "POST",
                            "body": "tick",
                            "headers": {"Content-Type": "text/plain"},
                        },
                        "retryPolicy": "[variables('retry')]",
                    },
                    "recurrence": {
                        "frequency": "Week",
                        "interval": 1,
                        "schedule": {"weekDays": ["Monday", "Friday"], "hours": [9], "minutes": [0]},
                    },
                },
            },
            {
                "apiVersion": "2016-03-01",
                "type": "Microsoft.Scheduler/jobCollections",
                "name": "[parameters('jobCollectionName')]",
                "location": "[parameters('location')]",
                "properties": {
                    "sku": {"name": "[parameters('sku')]"},
                    "state": "Enabled",
                    "quota": {"maxJobCount": "10", "maxRecurrence": {"Frequency": "Minute", "interval": "1"}},
                },
                "resources": [
                    {
                        "apiVersion": "2016-03-01",
                        "type": "jobs",
                        "name": "http-hourly",
                        "dependsOn": depends,
                        "properties": {
                            "state": "Enabled",
                            "startTime": "2026-01-01T00:00:00Z",
                            "action": {
                                "type": "Http",
                                "request": {"uri": "[parameters('httpUri')]", "method": "GET"},
                                "retryPolicy": {"retryType": "None"},
                            },
                            "recurrence": {"frequency": "Hour", "interval": 1, "count": 1000},
                        },
                    }
                ],
            },
            {
                "apiVersion": "2016-03-01",
                "type": "Microsoft.Scheduler/jobCollections/jobs",
                "name": "[concat(parameters('jobCollectionName'), '/queue-daily')]",
                "dependsOn": depends,
                "properties": {
                    "state": "Enabled",
                    "startTime": "2026-01-01T00:00:00Z",
                    "action": {
                        "type": "StorageQueue",
                        "queueMessage": {
                            "storageAccount": "[parameters('storageAccountName')]",
                            "queueName": "[variables('queueName')]",
                            "sasToken": "[parameters('sasToken')]",
                            "message": "[format('hello from {0}', parameters('jobCollectionName'))]",
                        },
                        "retryPolicy": "[variables('retry')]",
                    },
                    "recurrence": {"frequency": "Day", "schedule": {"hours": [6], "minutes": [30]}},
                },
            },
            {
                "apiVersion": "2016-08-01",
                "type": "Microsoft.Web/sites",
                "name": "unrelated-site",
                "location": "[resourceGroup().location]",
                "properties": {},
            },
        ],
    }


def _collection(host_url: str, name: str = "quickstart-jc", group: str = RG) -> str:
    return (
        f"{host_url}/subscriptions/cli-sub/resourceGroups/{group}/providers/Microsoft.Scheduler/jobCollections/{name}"
    )


def _rows(result) -> list[tuple[str, str, str]]:
    assert result.exit_code == 0, result.stderr
    return [(r["result"], r["type"], r["resource"]) for r in json.loads(result.stdout)]


def test_quickstart_template_what_if_apply_and_rerun(cli, host_url: str, tmp_path: Path) -> None:
    template = tmp_path / "azuredeploy.json"
    template.write_text(json.dumps(quickstart_template()))
    params = tmp_path / "azuredeploy.parameters.json"
    params.write_text(json.dumps({"parameters": {"sasToken": {"value": "?sv=2015&sig=abc"}}}))
    args = [
        "-o",
        "json",
        "import",
        str(template),
        "-g",
        RG,
        "-l",
        "westeurope",
        "-p",
        "httpUri=http://127.0.0.1:9",
        "-p",
        str(params),
    ]

    what_if = _rows(cli(*args, "--what-if"))
    assert what_if == [
        ("create", "collection", f"{RG}/quickstart-jc"),
        ("create", "job", f"{RG}/quickstart-jc/http-weekly"),
        ("create", "job", f"{RG}/quickstart-jc/http-hourly"),
        ("create", "job", f"{RG}/quickstart-jc/queue-daily"),
        ("ignored", "Microsoft.Web/sites", "unrelated-site"),
    ]
    assert requests.get(_collection(host_url), params=V, timeout=10).status_code == 404  # nothing written

    applied = _rows(cli(*args))
    assert [r[0] for r in applied] == ["created", "created", "created", "created", "ignored"]
    collection = requests.get(_collection(host_url), params=V, timeout=10).json()
    assert collection["location"].replace(" ", "").lower() == "westeurope"
    assert collection["properties"]["quota"]["maxJobCount"] == 10
    weekly = requests.get(f"{_collection(host_url)}/jobs/http-weekly", params=V, timeout=10).json()["properties"]
    assert weekly["action"]["request"]["uri"] == "http://127.0.0.1:9/weekly"
    assert weekly["action"]["retryPolicy"]["retryInterval"] == "PT1M"
    assert weekly["recurrence"]["schedule"]["weekDays"] == ["monday", "friday"]
    queue = requests.get(f"{_collection(host_url)}/jobs/queue-daily", params=V, timeout=10).json()["properties"]
    assert queue["action"]["queueMessage"]["queueName"] == "quickstart-jc-queue"
    assert queue["action"]["queueMessage"]["message"] == "hello from quickstart-jc"
    assert "sasToken" not in queue["action"]["queueMessage"]

    again = json.loads(cli(*args, "--what-if").stdout)
    verdicts = {r["resource"].rsplit("/", 1)[-1]: (r["result"], r["detail"]) for r in again}
    assert verdicts["quickstart-jc"][0] == "unchanged"
    assert verdicts["http-weekly"][0] == "unchanged" and verdicts["http-hourly"][0] == "unchanged"
    assert verdicts["queue-daily"] == ("change", "carries write-only secrets, which cannot be compared: re-applied")

    changed = _rows(cli(*args[:-4], "-p", "httpUri=http://127.0.0.1:10", "-p", str(params), "--what-if"))
    assert ("change", "job", f"{RG}/quickstart-jc/http-hourly") in changed
    assert ("unchanged", "collection", f"{RG}/quickstart-jc") in changed

    table = cli(
        "import", str(template), "-g", RG, "-l", "westeurope", "-p", "httpUri=http://127.0.0.1:9", "-p", str(params)
    )
    assert table.exit_code == 0 and "unchanged" in table.stdout and "updated" in table.stdout


def test_unsupported_expressions_and_missing_parameters_are_named(cli, tmp_path: Path) -> None:
    template = quickstart_template()
    template["parameters"]["jobCollectionName"]["defaultValue"] = "[uniqueString(resourceGroup().id)]"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(template))
    result = cli("import", str(path), "-g", RG, "-l", "westus", "-p", "httpUri=x", "-p", "sasToken=y", "--what-if")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: InvalidTemplate: 1 problem (nothing was written):",
        "  - parameters.jobCollectionName.defaultValue: the template function 'uniqueString' is not supported "
        "offline (in [uniqueString(resourceGroup().id)]); pass --parameter jobCollectionName=VALUE",
    ]
    plain = quickstart_template()
    path.write_text(json.dumps(plain))
    missing = cli("import", str(path), "-g", RG, "-l", "westus", "-p", "sasToken=y", "--what-if")
    assert missing.exit_code == 2 and "parameters.httpUri: no value; pass --parameter httpUri=VALUE" in missing.stderr
    no_location = cli("import", str(path), "-g", RG, "-p", "httpUri=x", "-p", "sasToken=y", "--what-if")
    assert no_location.exit_code == 2 and "resourceGroup().location needs --location" in no_location.stderr
    wrong_sku = cli(
        "import",
        str(path),
        "-g",
        RG,
        "-l",
        "westus",
        "-p",
        "httpUri=x",
        "-p",
        "sasToken=y",
        "-p",
        "sku=Gold",
        "--what-if",
    )
    assert wrong_sku.exit_code == 2 and "parameters.sku: 'Gold' is not one of" in wrong_sku.stderr


def test_exported_resource_list_is_applied_idempotently(cli, host_url: str, tmp_path: Path) -> None:
    base = "/subscriptions/old-sub/resourceGroups/export-rg/providers/Microsoft.Scheduler/jobCollections/exported"
    exported = {
        "value": [
            {
                "id": f"{base}/jobs/nightly",
                "type": "Microsoft.Scheduler/jobCollections/jobs",
                "name": "exported/nightly",
                "properties": {
                    "startTime": "2026-01-01T02:00:00Z",
                    "state": "Disabled",
                    "action": {
                        "type": "Http",
                        "request": {"uri": "http://127.0.0.1:9/nightly", "method": "GET"},
                        "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT5M", "retryCount": 3},
                    },
                    "recurrence": {"frequency": "Day", "interval": 1},
                    "status": {"executionCount": 12, "failureCount": 0, "faultedCount": 0},
                },
            },
            {
                "id": base,
                "type": "Microsoft.Scheduler/jobCollections",
                "name": "exported",
                "location": "North Europe",
                "properties": {"sku": {"name": "Standard"}, "state": "Enabled", "quota": {"maxJobCount": 50}},
            },
        ]
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps(exported))
    first = _rows(cli("-o", "json", "import", str(path)))
    assert first == [("created", "collection", "export-rg/exported"), ("created", "job", "export-rg/exported/nightly")]
    job = requests.get(f"{_collection(host_url, 'exported', 'export-rg')}/jobs/nightly", params=V, timeout=10).json()
    assert job["properties"]["state"] == "disabled"
    second = _rows(cli("-o", "json", "import", str(path)))
    assert [r[0] for r in second] == ["unchanged", "unchanged"]
