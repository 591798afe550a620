"""`python -m devhost` as a subprocess: reuse of the given storage, the printed base URL, clean SIGTERM exit."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from devhost.azurite import Azurite, free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_APP = Path(__file__).parent / "sample_app"


def read_line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    if not ready:
        process.kill()
        raise AssertionError(f"no output within {timeout}s; stderr: {process.communicate()[1]}")
    line = process.stdout.readline()
    if not line:  # the end of its output: the host exited, and its stderr says why
        stderr = process.communicate(timeout=timeout)[1]
        raise AssertionError(f"the host exited ({process.returncode}) before its line; stderr: {stderr}")
    return line.strip()


def start_cli(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "devhost", *args],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop_cli(process: subprocess.Popen[str]) -> tuple[int, str]:
    process.send_signal(signal.SIGTERM)
    try:
        _, stderr = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return process.returncode, stderr


def test_subprocess_host_on_chosen_port_uses_given_storage(azurite: Azurite, tmp_path: Path) -> None:
    app_dir = tmp_path / "app"
    shutil.copytree(SAMPLE_APP, app_dir, ignore=shutil.ignore_patterns("__pycache__"))
    port = free_port()
    env = {**os.environ, "AzureWebJobsStorage": azurite.connection_string, "PATH": os.defpath}
    process = start_cli(["--app-dir", str(app_dir), "--port", str(port)], env)
    try:
        assert read_line(process, timeout=30) == f"http://127.0.0.1:{port}/api"
        response = requests.get(f"http://127.0.0.1:{port}/api/items/7", timeout=10)
        assert response.json()["route_params"] == {"id": "7"}
    finally:
        began = time.monotonic()
        code, stderr = stop_cli(process)
    assert code == 0, stderr
    assert time.monotonic() - began < 5
    assert "Azurite" not in stderr
    assert not (app_dir / ".local").exists(), "no second Azurite when AzureWebJobsStorage is a real connection"
    assert '"GET /api/items/7" 200' in stderr, "one access line per request on stderr"
