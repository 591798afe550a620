"""`python -m devhost` as a subprocess: reuse of the given storage, the printed base URL, clean SIGTERM exit,
and delegation to Core Tools' `func` when it is on PATH."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import textwrap
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
    return process.stdout.readline().strip()


def start_cli(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "devhost", *args], cwd=REPO_ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
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
    process = start_cli(["--app-dir", str(app_dir), "--port", str(port), "--in-process"], env)
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


def test_func_on_path_is_run_as_a_child_and_stopped(azurite: Azurite, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "func-args.txt"
    fake_func = bin_dir / "func"
    # A stand-in for Core Tools: records its arguments, listens on the port, runs until signalled.
    fake_func.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import os, signal, socket, sys, time
        open({str(record)!r}, "w").write(" ".join(sys.argv[1:]) + "\\n" + os.getcwd())
        server = socket.socket()
        server.bind(("127.0.0.1", int(sys.argv[sys.argv.index("--port") + 1])))
        server.listen()
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        while True:
            time.sleep(0.1)
        """))
    fake_func.chmod(0o755)
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    (app_dir / "host.json").write_text('{"version": "2.0", "extensions": {"http": {"routePrefix": "v1"}}}')
    port = free_port()
    env = {**os.environ, "AzureWebJobsStorage": azurite.connection_string,
           "PATH": f"{bin_dir}{os.pathsep}{os.defpath}", "PORT": str(port)}
    process = start_cli(["--app-dir", str(app_dir)], env)
    try:
        assert read_line(process, timeout=30) == f"http://127.0.0.1:{port}/v1"
    finally:
        code, stderr = stop_cli(process)
    assert code == 0, stderr
    args, cwd = record.read_text().splitlines()
    assert (args, Path(cwd)) == (f"start --port {port}", app_dir)
    time.sleep(0.2)
    assert not _port_open(port), "the func child was stopped with the CLI"


def _port_open(port: int) -> bool:
    import socket

    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0
