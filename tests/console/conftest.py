"""The real function_app.py under the local host (a child process, as tests/test_end_to_end.py starts it),
shared by the console and CLI tests of this folder: one host per module, its own tables."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from devhost.azurite import free_port

ROOT = Path(__file__).resolve().parents[2]
V = {"api-version": "2016-03-01"}


@pytest.fixture(scope="module")
def host_url(azurite) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "AzureWebJobsStorage": azurite.connection_string,
           "SCHEDULER_TABLE_PREFIX": f"c{uuid.uuid4().hex[:10]}", "SCHEDULER_ALLOW_PRIVATE_TARGETS": "true",
           "REGION_NAME": "local"}
    process = subprocess.Popen([sys.executable, "-m", "devhost", "--port", str(port), "--in-process"], cwd=ROOT,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        base = process.stdout.readline().strip()  # the host prints its base URL once it serves
        assert base == f"http://127.0.0.1:{port}/api", base
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)
