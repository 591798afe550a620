"""A Storage-queue job can be tried locally from the README alone: its "Try a Storage-queue job locally" block runs
as written (in bash, against the real function_app.py under the local host): `scheduler local queue-sas` creates
the queue in the local Azurite and prints a SAS, the job created through the local API fires into that queue, and
`scheduler local queue-peek` shows the envelope. A SAS storage refuses (403) is recorded with what to check and
what the SAS itself shows, never the SAS."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from azure.storage.queue import QueueClient, QueueSasPermissions, generate_queue_sas
from typer.testing import CliRunner

from devhost.azurite import ACCOUNT_KEY, ACCOUNT_NAME, Azurite
from scheduler_cli.main import app
from tests.support.local_host import local_host

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")


@pytest.fixture(scope="module")
def host_url(azurite: Azurite) -> Iterator[str]:
    with local_host(azurite) as base:
        yield base


def _readme_block() -> str:
    section = README[README.index("### Try a Storage-queue job locally") :]
    return re.findall(r"```sh\n(.*?)```", section, re.S)[0]


def test_the_readme_block_fires_a_storage_queue_job_into_the_local_azurite(
    azurite: Azurite, host_url: str, tmp_path: Path
) -> None:
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")  # the block runs from a checkout's root
    env = {**os.environ, "SCHEDULER_ENDPOINT": host_url, "DEVHOST_AZURITE_PORTS": str(azurite.ports)}
    ran = subprocess.run(
        ["bash", "-e", "-c", _readme_block()], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    out = re.sub(r"\s+", " ", ran.stdout)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "Job to-orders ran: Completed (MainAction, attempt 1" in out
    assert f"successfully sent to queue 'orders' of storage account '{ACCOUNT_NAME}'" in out
    assert "<ExecutionTag>" in out and "<Message>hello, queue</Message>" in out  # queue-peek, decoded
    assert "Traceback" not in ran.stderr
    queue = QueueClient.from_connection_string(azurite.connection_string, "orders")
    [message] = queue.peek_messages(max_messages=32)  # in the test's own Azurite, read without the CLI
    assert "<Message>hello, queue</Message>" in base64.b64decode(message.content).decode()


@pytest.mark.parametrize(
    ("sas", "refusal"),
    [
        ("sv=2020-08-04&sig=bWFkZSB1cA%3D%3D", "AuthenticationFailed. "),  # made up
        (
            generate_queue_sas(
                ACCOUNT_NAME,
                "refused",
                ACCOUNT_KEY,
                permission=QueueSasPermissions(read=True),
                expiry=datetime.now(UTC) + timedelta(days=1),
            ),
            "AuthorizationPermissionMismatch. This sasToken does not grant add ('a'). ",
        ),
    ],
    ids=["made-up", "read-only"],
)
def test_a_refused_sas_records_what_to_check(
    azurite: Azurite, host_url: str, sas: str, refusal: str, request: pytest.FixtureRequest
) -> None:
    collection = f"sq-{request.node.callspec.id}"
    env = {"DEVHOST_AZURITE_PORTS": str(azurite.ports)}
    runner = CliRunner()

    def cli(*args: str, stdin: str | None = None):
        base = ["--endpoint", host_url, "--subscription", "sq-sub"]
        return runner.invoke(app, [*base, *args], input=stdin, env=env, catch_exceptions=False)

    assert cli("local", "queue-sas", "refused").exit_code == 0  # the queue exists: only the SAS is wrong
    assert cli("collections", "create", "-g", "rg", "-c", collection, "--location", "westeurope").exit_code == 0
    job = (
        '{"properties": {"action": {"type": "StorageQueue", "queueMessage": {"storageAccount": "devstoreaccount1", '
        f'"queueName": "refused", "sasToken": "{sas}", "message": "m"}}}}, '
        '"recurrence": {"frequency": "Day", "schedule": {"hours": [9], "minutes": [0]}}}}'
    )
    assert cli("jobs", "create", "-g", "rg", "-c", collection, "-n", "refused", "-f", "-", stdin=job).exit_code == 0
    ran = cli("-o", "json", "jobs", "run", "-g", "rg", "-c", collection, "-n", "refused", "--wait")
    assert ran.exit_code == 1, ran.stdout + ran.stderr
    assert json.loads(ran.stdout)["properties"]["message"] == (
        "StorageQueue Action - Sending to queue 'refused' of storage account 'devstoreaccount1' failed: 403 "
        f"{refusal}Locally, `scheduler local queue-sas refused` prints a working SAS (and "
        "creates the queue). Check that the queue exists and that the sasToken is a SAS of this account for this "
        "queue (or an account SAS for queue objects) with add ('a'), not expired."
    )
