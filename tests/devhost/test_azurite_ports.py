"""A second `python -m devhost` never shares storage silently. Azurite's ports held by an Azurite it did not start
are refused in one line naming DEVHOST_AZURITE_PORTS with free ports (and `--help` names the setting); a busy
HTTP port's way out carries those ports too, and following it runs a host with an Azurite of its own (its own
ports and data folder, gone with the host). The reusable Azurite `python -m devhost.azurite` runs for this
checkout is reused; the Azurite another host of this checkout started is not."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from devhost.azurite import MARKER, Azurite, AzuritePorts, free_port, free_ports
from devhost.cli import main
from devhost.devstorage import data_location, plan_development_storage

from .test_cli import REPO_ROOT, SAMPLE_APP, read_line
from .test_signals_and_ports import _open, _wait

WAY_OUT = re.compile(r"(?:PORT=(\d+) )?DEVHOST_AZURITE_PORTS=(\d+),(\d+),(\d+) make run$")


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    app = tmp_path / "app"
    shutil.copytree(SAMPLE_APP, app, ignore=shutil.ignore_patterns("__pycache__"))
    return app


def _env(ports: AzuritePorts, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AzureWebJobsStorage", "PORT")}
    return {**env, "DEVHOST_AZURITE_PORTS": str(ports), **more}


def _devhost(app_dir: Path, env: dict[str, str], port: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devhost", "--app-dir", str(app_dir), "--port", str(port)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_help_names_the_setting_that_moves_azurite(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    shown = capsys.readouterr().out
    assert "DEVHOST_AZURITE_PORTS" in shown and "refuses ports held by an Azurite it did not" in shown


def test_someone_elses_azurite_is_refused_with_the_setting_that_moves_it(azurite: Azurite, app_dir: Path) -> None:
    port = free_port()
    ran = _devhost(app_dir, _env(azurite.ports), port)
    assert ran.returncode == 1 and ran.stdout == "" and "Traceback" not in ran.stderr
    [line] = ran.stderr.splitlines()
    assert line.startswith(
        f"error: Azurite's ports {azurite.ports} are taken by an Azurite this checkout did not start"
    ), line
    found = WAY_OUT.search(line)
    assert found and found.group(1) == str(port), line
    assert not (app_dir / ".local").exists(), "nothing was started"


def test_the_busy_port_way_out_gives_the_host_an_azurite_of_its_own(azurite: Azurite, app_dir: Path) -> None:
    with socket.socket() as taken:
        # Below the ephemeral range (free_port), as the way out's port after it then is: one in that range may be
        # taken by an outgoing connection before the host binds it.
        taken.bind(("127.0.0.1", free_port()))
        taken.listen()
        port = taken.getsockname()[1]
        refused = _devhost(app_dir, _env(azurite.ports), port)
    assert refused.returncode == 1
    found = WAY_OUT.search(refused.stderr.strip())
    assert found and found.group(1), refused.stderr
    new_port, *ports = (int(p) for p in found.groups())
    own = AzuritePorts(*ports)
    # What `make run` does with those settings (Makefile: `python -m devhost --port $${PORT:-7071}`).
    process = subprocess.Popen(
        [sys.executable, "-m", "devhost", "--app-dir", str(app_dir), "--port", str(new_port)],
        cwd=REPO_ROOT,
        env=_env(own, PORT=str(new_port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert read_line(process, timeout=90) == f"http://127.0.0.1:{new_port}/api"
        assert all(_open(p) for p in ports)
        marker = json.loads((app_dir / ".local" / f"azurite-{own.blob}" / MARKER).read_text())
        assert marker["ports"] == ports and marker["reusable"] is False  # its own, in a folder of its own
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0
    assert _wait(lambda: not any(_open(p) for p in ports), timeout=20), "the host's Azurite went with it"
    assert all(_open(p) for p in (azurite.ports.blob, azurite.ports.queue, azurite.ports.table))


def test_this_checkouts_reusable_azurite_is_reused_and_another_hosts_is_not(
    app_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ports = AzuritePorts(*free_ports(3))
    monkeypatch.setenv("DEVHOST_AZURITE_PORTS", str(ports))
    monkeypatch.delenv("AzureWebJobsStorage", raising=False)
    location = data_location(app_dir, ports)
    with Azurite(location, ports, in_memory=True, reusable=True):  # `python -m devhost.azurite`
        plan = plan_development_storage(app_dir)
        assert plan is not None and plan.action == "reuse"
    with Azurite(location, ports, in_memory=True):  # another `make run` of this checkout
        plan = plan_development_storage(app_dir)
        assert plan is not None and plan.action == "refuse"
        assert plan.taken_by == "the Azurite of another `make run` of this checkout"
    assert not (location / MARKER).exists()
