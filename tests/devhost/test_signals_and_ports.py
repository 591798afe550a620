"""`python -m devhost` as a subprocess, starting its own Azurite (on free ports through DEVHOST_AZURITE_PORTS):
a closed terminal (SIGHUP) stops it like SIGTERM and takes that Azurite down with it; a host killed outright
still leaves no Azurite behind; a port already in use is one line with the way out and no traceback, and
Azurite is not even started; the start ends with the console's address."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from devhost.azurite import free_port, free_ports

from .test_cli import REPO_ROOT, SAMPLE_APP, read_line


def _open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _wait(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def own_storage(tmp_path: Path) -> tuple[Path, dict[str, str], list[int]]:
    """A copy of the sample app and an environment in which devhost starts an Azurite of its own."""
    app_dir = tmp_path / "app"
    shutil.copytree(SAMPLE_APP, app_dir, ignore=shutil.ignore_patterns("__pycache__"))
    ports = free_ports(3)
    env = {k: v for k, v in os.environ.items() if k != "AzureWebJobsStorage"}
    env["DEVHOST_AZURITE_PORTS"] = ",".join(str(p) for p in ports)
    return app_dir, env, ports


def _start(app_dir: Path, env: dict[str, str], port: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "devhost", "--app-dir", str(app_dir), "--port", str(port)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGKILL])
def test_a_closed_terminal_or_a_killed_host_leaves_no_azurite_behind(own_storage, signum: int) -> None:
    app_dir, env, ports = own_storage
    port = free_port()
    process = _start(app_dir, env, port)
    try:
        assert read_line(process, timeout=60) == f"http://127.0.0.1:{port}/api"
        assert all(_open(p) for p in ports), "devhost started its own Azurite"
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    if signum == signal.SIGHUP:
        assert process.returncode == 0, stderr
        assert "Traceback" not in stderr
    assert _wait(lambda: not any(_open(p) for p in ports), timeout=20), f"Azurite still serves after {signum!r}"


def test_a_port_in_use_is_one_line_with_the_way_out(own_storage) -> None:
    app_dir, env, ports = own_storage
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ran = subprocess.run(
            [sys.executable, "-m", "devhost", "--app-dir", str(app_dir), "--port", str(port)],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert ran.returncode == 1 and ran.stdout == ""
    prefix = f"error: 127.0.0.1:{port} is already in use (another `make run`?); stop it, or choose another port: "
    assert ran.stderr.startswith(prefix), ran.stderr
    # The way out names the first port after it that could be bound then (on a busy machine, not always port + 1).
    suggested = re.fullmatch(r"PORT=(\d+) make run\n", ran.stderr[len(prefix) :])
    assert suggested is not None and port < int(suggested.group(1)) < port + 200, ran.stderr
    assert not any(_open(p) for p in ports) and not (app_dir / ".local").exists(), "Azurite was not started"


def test_the_start_ends_with_the_console_address(own_storage) -> None:
    app_dir, env, _ = own_storage
    port = free_port()
    process = _start(app_dir, env, port)
    try:
        assert read_line(process, timeout=60) == f"http://127.0.0.1:{port}/api"
        assert process.stderr is not None
        lines: list[str] = []
        while not lines or not lines[-1].startswith("Console: "):
            lines.append(process.stderr.readline().rstrip("\n"))
        assert lines[-1] == (
            f"Console: http://127.0.0.1:{port}/api/console   (Ctrl-C stops the host and the Azurite it started)"
        )
        assert any("Functions:" in line for line in lines[:-1])  # the routes come before it
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
    assert process.returncode == 0
