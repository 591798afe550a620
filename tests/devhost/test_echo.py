"""`python -m devhost.echo`, the README's local target: it answers every request with what it received (the
scheduler's x-ms-* headers and the body), or with the status `?status=` asks for."""

from __future__ import annotations

import subprocess
import sys

import requests

from devhost.echo import serve

from .test_cli import REPO_ROOT, read_line


def test_it_echoes_the_request_and_answers_the_status_asked_for() -> None:
    server = serve(0)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        ok = requests.post(
            f"{base}/ping",
            data=b"hello",
            timeout=10,
            headers={"x-ms-scheduler-jobid": "/subscriptions/s/.../jobs/ping", "x-other": "no"},
        )
        assert ok.status_code == 200
        assert ok.text == "echo: POST /ping\nbody: hello\nx-ms-scheduler-jobid: /subscriptions/s/.../jobs/ping\n"
        failed = requests.get(f"{base}/broken?status=500", timeout=10)
        assert failed.status_code == 500 and failed.text == "echo: GET /broken?status=500\n"
    finally:
        server.shutdown()
        server.server_close()


def test_as_a_command_it_prints_its_address_and_stops_on_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "devhost.echo", "--port", "0"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = read_line(process, timeout=30)
        assert requests.get(url, timeout=10).text.startswith("echo: GET /")
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert process.returncode == 0 and "echo: GET / -> 200 OK" in stderr
