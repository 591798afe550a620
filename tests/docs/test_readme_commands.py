"""The README's commands work as written on a machine without a network: its "Your first job" block (the local
echo target, the CLI from creating a collection to a failing run, importing the sample template and an export)
runs in bash against the real function_app.py under the local host, and its local SDK snippet runs with the
official azure-mgmt-scheduler client. Only the addresses change: the test's host and a free port for the echo
target stand in for 7071 and 8080, which other processes on a shared machine may hold."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from devhost.azurite import free_port
from tests.support.local_host import local_host

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")


def _block(language: str, after: str, containing: str = "") -> str:
    section = README[README.index(after) :]
    return next(b for b in re.findall(rf"```{language}\n(.*?)```", section, re.S) if containing in b)


@pytest.fixture(scope="module")
def host_url(azurite) -> Iterator[str]:
    with local_host(azurite) as base:
        yield base


def test_the_first_job_block_runs_as_written(host_url: str, tmp_path: Path) -> None:
    echo = free_port()
    script = (
        _block("sh", "## Your first job")
        .replace("127.0.0.1:8080", f"127.0.0.1:{echo}")
        .replace("python -m devhost.echo &", f"python -m devhost.echo --port {echo} &")
    )
    failing = next(line for line in script.splitlines() if "a failure: exit code 1" in line)
    command, _, comment = failing.partition("  #")
    script = script.replace(failing, f'{command} || echo "exit code $?"  #{comment}')
    for name in (".venv", "docs", "devhost"):  # the block runs from a checkout's root
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "SCHEDULER_ENDPOINT": host_url}
    process = subprocess.Popen(
        ["bash", "-e", "-c", f"trap 'kill %1 2>/dev/null' EXIT\n{script}\n"],  # a failed step ends the target too
        cwd=tmp_path,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=240)
    finally:  # a failed step leaves the echo target running: end the whole group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    ran = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    out = re.sub(r"\s+", " ", ran.stdout)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "every Monday and Friday at 09:00 Europe/London" in out
    assert "Job ping ran: Completed (MainAction, attempt 1, started " in out
    assert "'OK' Response Headers" in out and "echo: POST /ping body: hello" in out
    assert "Job ping ran: Failed (MainAction, attempt 1" in out and "'Internal Server Error'" in out
    assert "exit code 1" in out
    assert out.count("create ") >= 3 and out.count("created ") >= 3  # the sample template: what-if, then for real
    assert "echo: POST /ping -> 200 OK (job ping)" in ran.stderr
    assert "Traceback" not in ran.stderr
    # The block writes its files in a folder of its own (mktemp -d), never in the checkout it runs from.
    assert sorted(p.name for p in tmp_path.iterdir()) == [".venv", "devhost", "docs"]
    assert re.search(r"Exported job collection my-jobs and \d+ jobs? to \S+/my-jobs\.json", out)
    backfilled = out.split("Backfill of ping: queued", 1)[-1]  # shown in the job's zone (Mondays and Fridays):
    assert "Backfill of ping: queued" in out and backfilled.count(" 09:00:00 Europe/London (") >= 4  # of 14 days


def test_the_local_sdk_snippet_runs_as_written(host_url: str) -> None:
    # The collection the first job's block creates; made here too, since that test may run in another worker.
    create = next(line for line in _block("sh", "## Your first job").splitlines() if "collections create" in line)
    command = [sys.executable, "-m", "scheduler_cli", *create.split()[1:]]  # `scheduler ...`, wherever PATH points
    where = {"SCHEDULER_ENDPOINT": host_url, "SCHEDULER_SUBSCRIPTION": "my-sub"}  # as the block exports them
    subprocess.run(command, env={**os.environ, **where}, capture_output=True, cwd=ROOT)
    snippet = _block("python", "Locally (`make run`", "LocalCredential").replace("http://127.0.0.1:7071/api", host_url)
    ran = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert ran.returncode == 0, ran.stderr
    assert "my-jobs Enabled" in ran.stdout
